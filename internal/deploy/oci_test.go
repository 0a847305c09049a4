package deploy

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// imageConfig is the part of an OCI image configuration the tests read.
type imageConfig struct {
	Config struct {
		User         string
		Env          []string
		Entrypoint   []string
		Cmd          []string
		ExposedPorts map[string]struct{}
		Labels       map[string]string
	} `json:"config"`
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

type manifest struct {
	MediaType string       `json:"mediaType"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
	Manifests []descriptor `json:"manifests"` // when it is an index
}

// ociImage is an OCI archive (`podman save --format oci-archive`) whose
// files were extracted to dir.
type ociImage struct {
	dir string
}

// openArchive extracts the archive's own tar (index.json, blobs/) into a
// temporary folder.
func openArchive(t *testing.T, archive string) ociImage {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name, err := inside(dir, h.Name)
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if err := writeFile(name, tr, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ociImage{dir: dir}
}

func (o ociImage) readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(o.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func blobPath(d descriptor) string {
	alg, hex, _ := strings.Cut(d.Digest, ":")
	return path.Join("blobs", alg, hex)
}

// manifest follows index.json to the image's one manifest, through a
// nested index if there is one.
func (o ociImage) manifest(t *testing.T) manifest {
	t.Helper()
	var m manifest
	o.readJSON(t, "index.json", &m)
	for len(m.Manifests) > 0 {
		if len(m.Manifests) != 1 {
			t.Fatalf("want one image in the archive, found %d", len(m.Manifests))
		}
		next := m.Manifests[0]
		m = manifest{}
		o.readJSON(t, blobPath(next), &m)
	}
	if len(m.Layers) == 0 {
		t.Fatal("the manifest names no layers")
	}
	return m
}

func (o ociImage) config(t *testing.T, m manifest) imageConfig {
	t.Helper()
	var c imageConfig
	o.readJSON(t, blobPath(m.Config), &c)
	return c
}

// unpack applies the manifest's layers in order into root, keeping each
// file's owner and mode as the image records them; whiteouts delete.
func (o ociImage) unpack(t *testing.T, m manifest, root string) {
	t.Helper()
	for _, l := range m.Layers {
		if err := o.applyLayer(l, root); err != nil {
			t.Fatalf("layer %s: %v", l.Digest, err)
		}
	}
}

func (o ociImage) applyLayer(l descriptor, root string) error {
	f, err := os.Open(filepath.Join(o.dir, blobPath(l)))
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(l.MediaType, "tar+gzip"):
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	case strings.HasSuffix(l.MediaType, ".tar"):
	default:
		return fmt.Errorf("layer media type %q: want a tar, plain or gzip", l.MediaType)
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := applyEntry(root, h, tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

func applyEntry(root string, h *tar.Header, r io.Reader) error {
	name, err := inside(root, h.Name)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(name)
	if base == ".wh..wh..opq" {
		entries, err := os.ReadDir(dir)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		return err
	}
	if gone, ok := strings.CutPrefix(base, ".wh."); ok {
		return os.RemoveAll(filepath.Join(dir, gone))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := h.FileInfo().Mode()
	switch h.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(name, mode.Perm()); err != nil {
			return err
		}
	case tar.TypeReg:
		os.RemoveAll(name)
		if err := writeFile(name, r, mode.Perm()); err != nil {
			return err
		}
	case tar.TypeSymlink:
		os.RemoveAll(name)
		if err := os.Symlink(h.Linkname, name); err != nil {
			return err
		}
		return os.Lchown(name, h.Uid, h.Gid)
	case tar.TypeLink:
		target, err := inside(root, h.Linkname)
		if err != nil {
			return err
		}
		os.RemoveAll(name)
		return os.Link(target, name)
	default:
		return fmt.Errorf("entry type %q not expected in this image", h.Typeflag)
	}
	if err := os.Lchown(name, h.Uid, h.Gid); err != nil {
		return err
	}
	// Chmod after chown: chown clears the set-id bits.
	return os.Chmod(name, mode&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
}

// inside is name under root: cleaned as an absolute path first, so that
// no "../" climbs out of it.
func inside(root, name string) (string, error) {
	if name == "" {
		return "", errors.New("an entry without a name")
	}
	return filepath.Join(root, filepath.FromSlash(path.Clean("/"+name))), nil
}

func writeFile(name string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
