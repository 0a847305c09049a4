package deploy

import (
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// imageUser is the user the image runs as: uid and gid 65532, "clinic".
const imageUser = "65532:65532"

// imageArchive is the archive to test, CLINIC_IMAGE_ARCHIVE, which `make
// test-image` sets right after building it (an archive left by an older
// build would be tested against newer migrations and files). Unpacking
// keeps the image's owners and chroot needs root, so anyone else skips.
func imageArchive(t *testing.T) string {
	t.Helper()
	archive := os.Getenv("CLINIC_IMAGE_ARCHIVE")
	if archive == "" {
		t.Skip("no image archive named: `make test-image` builds the image and runs this test with CLINIC_IMAGE_ARCHIVE set")
	}
	if os.Geteuid() != 0 {
		t.Skip("the image test unpacks with the image's owners and runs chroot: it needs root (make test-image as root)")
	}
	if _, err := os.Stat(archive); err != nil {
		t.Fatalf("CLINIC_IMAGE_ARCHIVE: %v", err)
	}
	return archive
}

// TestImage unpacks the archive `make image` wrote, as a container engine
// would, and checks what it holds; the server itself is run from it by
// TestImageServes.
func TestImage(t *testing.T) {
	archive := imageArchive(t)
	img := openArchive(t, archive)
	m := img.manifest(t)
	cfg := img.config(t, m).Config
	root := unpacked(t, img, m)

	t.Run("RunsServeAsTheClinicUser", func(t *testing.T) {
		if cfg.User != imageUser {
			t.Errorf("USER %q, want %q", cfg.User, imageUser)
		}
		if !slices.Equal(cfg.Entrypoint, []string{"/usr/local/bin/clinic"}) || !slices.Equal(cfg.Cmd, []string{"serve"}) {
			t.Errorf("ENTRYPOINT %q CMD %q, want the binary and serve", cfg.Entrypoint, cfg.Cmd)
		}
		if _, ok := cfg.ExposedPorts["8080/tcp"]; !ok {
			t.Errorf("EXPOSE %v, want 8080/tcp", cfg.ExposedPorts)
		}
		for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.version"} {
			if cfg.Labels[l] == "" {
				t.Errorf("label %s missing (labels %v)", l, cfg.Labels)
			}
		}
		passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
		group, _ := os.ReadFile(filepath.Join(root, "etc/group"))
		if !strings.Contains(string(passwd), "\nclinic:x:65532:65532:") || !strings.Contains(string(group), "\nclinic:x:65532:") {
			t.Errorf("passwd/group do not name uid 65532 clinic:\n%s%s", passwd, group)
		}
	})
	t.Run("OnlyItsFilesAllRootsAndReadOnly", func(t *testing.T) { checkFiles(t, root) })
	t.Run("StaticBinary", func(t *testing.T) { checkStatic(t, filepath.Join(root, "usr/local/bin/clinic")) })
	t.Run("CABundle", func(t *testing.T) {
		pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
		if err != nil {
			t.Fatal(err)
		}
		if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(pem) || strings.Count(string(pem), "BEGIN CERTIFICATE") < 100 {
			t.Fatalf("the CA bundle holds %d certificates", strings.Count(string(pem), "BEGIN CERTIFICATE"))
		}
	})
	t.Run("Serves", func(t *testing.T) { checkServes(t, root, cfg.Env, cfg.User) })
}

// unpacked is the image's root filesystem in a temporary folder. Its top
// is opened to everyone, as an engine's root is: the user must reach "/".
func unpacked(t *testing.T, img ociImage, m manifest) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	img.unpack(t, m, root)
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// stateDir is the one folder of the image the server writes to (the
// ledger of erasures), its user's.
const stateDir = "/var/lib/clinic"

// checkFiles: the image holds the binary, the CA bundle, passwd and group
// and nothing else; all are root's and none can be written by the user
// the server runs as, but for its state folder.
func checkFiles(t *testing.T, root string) {
	want := map[string]fs.FileMode{
		"/etc/passwd":                        0o644,
		"/etc/group":                         0o644,
		"/etc/ssl/certs/ca-certificates.crt": 0o644,
		"/usr/local/bin/clinic":              0o755,
	}
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		name := "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		st := info.Sys().(*syscall.Stat_t)
		if name == stateDir {
			if st.Uid != 65532 || st.Gid != 65532 || info.Mode()&0o022 != 0 {
				t.Errorf("%s is %d:%d %v, want the server's own and written by it alone", name, st.Uid, st.Gid, info.Mode())
			}
			return nil
		}
		if st.Uid != 0 || st.Gid != 0 {
			t.Errorf("%s is owned by %d:%d, want root", name, st.Uid, st.Gid)
		}
		if info.Mode()&0o022 != 0 && info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is writable by others (%v)", name, info.Mode())
		}
		if d.IsDir() {
			return nil
		}
		found = append(found, name)
		if mode, ok := want[name]; !ok {
			t.Errorf("unexpected file %s in the image", name)
		} else if info.Mode() != mode {
			t.Errorf("%s has mode %v, want %v", name, info.Mode(), mode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, stateDir)); err != nil {
		t.Errorf("no state folder: %v", err)
	}
	if len(found) != len(want) {
		t.Errorf("files %v, want %d: %v", found, len(want), want)
	}
}

// checkStatic: no program interpreter and no shared library, so nothing
// outside the binary is needed; built without cgo and with -trimpath.
func checkStatic(t *testing.T, bin string) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil && !errors.Is(err, elf.ErrNoSymbols) || len(libs) > 0 {
		t.Errorf("the binary needs %v (%v)", libs, err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("built with CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
}
