package deploy

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// checkThroughNginx runs nginx with nginx.conf in front of the server the
// image test started (both upstreams pointed at it, listening on a free
// loopback port) and asks for a clinic page through it, and for /metrics,
// which the proxy keeps inside. Skipped without nginx.
func checkThroughNginx(t *testing.T, serverPort int) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if nginx, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian's nginx; make test-image installs it)")
		}
	}
	src, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	port := testkit.FreePort(t)
	conf := strings.NewReplacer(
		"clinic-1:8080", "127.0.0.1:"+strconv.Itoa(serverPort),
		"clinic-2:8080", "127.0.0.1:"+strconv.Itoa(serverPort),
		"listen 80;", "listen 127.0.0.1:"+strconv.Itoa(port)+";",
	).Replace(string(src))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"),
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+"; daemon off;")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// nginx's workers are its children: a group of their own, so that the
	// whole group goes even if the master dies first, and Wait gives up on
	// the output a worker may still hold.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGQUIT) // graceful: the master stops its workers
		stopped := make(chan struct{})
		go func() { cmd.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-stopped
		}
		if t.Failed() {
			t.Logf("nginx's log:\n%s", logs.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	testkit.WaitFor(t, 10*time.Second, "nginx to answer", func() bool { status, _ := get(t, base+"/readyz"); return status == http.StatusOK })
	if status, body := get(t, base+"/c/demo"); status != 200 || !strings.Contains(body, "Demo Health Clinic") {
		t.Errorf("/c/demo through nginx: %d\n%.300s", status, body)
	}
	if status, _ := get(t, base+"/metrics"); status != http.StatusNotFound {
		t.Errorf("/metrics through nginx: %d, want 404", status)
	}
}
