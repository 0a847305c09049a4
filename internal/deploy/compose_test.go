package deploy

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/clinic/booking/internal/config"
)

// composeSchema is the Compose specification's JSON schema
// (compose-spec.json, from the compose-spec project, Apache License 2.0).
func composeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("compose-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("compose-spec.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("compose-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON is a YAML document as encoding/json would decode it, the form the
// validator takes (anchors and merge keys resolved).
func asJSON(t *testing.T, src []byte) any {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestComposeMatchesTheSpecification(t *testing.T) {
	schema := composeSchema(t)
	src, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(asJSON(t, src)); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	// The schema refuses what a typo makes, so its yes above means something.
	for _, bad := range []struct{ from, to string }{
		{"    healthcheck:\n      test: [\"CMD\", \"/usr/local/bin/clinic\"", "    helthcheck:\n      test: [\"CMD\", \"/usr/local/bin/clinic\""},
		{"condition: service_healthy", "condition: healthy"},
		{"stop_grace_period: 30s", "stop_grace_period: [30s]"},
	} {
		mutated := strings.Replace(string(src), bad.from, bad.to, 1)
		if mutated == string(src) {
			t.Fatalf("%q is not in compose.yaml", bad.from)
		}
		if err := schema.Validate(asJSON(t, []byte(mutated))); err == nil {
			t.Errorf("the schema accepts compose.yaml with %q", bad.to)
		}
	}
}

// compose is the part of compose.yaml the checks below read.
type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		EnvFile     []string          `yaml:"env_file"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Networks    yaml.Node         `yaml:"networks"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
}

func readCompose(t *testing.T) compose {
	t.Helper()
	src, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(src, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// networksOf is a service's networks and, where given, its fixed address.
func networksOf(t *testing.T, n yaml.Node) map[string]string {
	t.Helper()
	out := map[string]string{}
	var list []string
	if n.Decode(&list) == nil {
		for _, name := range list {
			out[name] = ""
		}
		return out
	}
	var m map[string]struct {
		IPv4 string `yaml:"ipv4_address"`
	}
	if err := n.Decode(&m); err != nil {
		t.Fatal(err)
	}
	for name, v := range m {
		out[name] = v.IPv4
	}
	return out
}

// envFile is the KEY=value lines of an env file.
func envFile(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	return env
}

// TestComposeServersTrustTheProxyOnly: each server's settings (its env
// file's example and its environment) pass the server's own parser; the
// proxy's address is among TRUSTED_PROXIES, which stay inside the network
// only the proxy and the servers share; only the proxy is published; the
// servers are probed with `clinic healthcheck` and wait for healthy
// dependencies, as the proxy waits for them.
func TestComposeServersTrustTheProxyOnly(t *testing.T) {
	c := readCompose(t)
	proxyAddr := netip.MustParseAddr(networksOf(t, c.Services["proxy"].Networks)["edge"])
	edge := netip.MustParsePrefix(c.Networks["edge"].IPAM.Config[0].Subnet)
	for _, name := range []string{"clinic-1", "clinic-2"} {
		s := c.Services[name]
		env := envFile(t, strings.TrimSuffix(s.EnvFile[0], ".env")+".env.example")
		for k, v := range s.Environment {
			env[k] = v
		}
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cfg.TrustedProxies) == 0 || !slices.ContainsFunc(cfg.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(proxyAddr) }) {
			t.Errorf("%s: TRUSTED_PROXIES %v leaves out the proxy's %s", name, cfg.TrustedProxies, proxyAddr)
		}
		for _, p := range cfg.TrustedProxies {
			if !edge.Contains(p.Addr()) || p.Bits() < edge.Bits() {
				t.Errorf("%s: TRUSTED_PROXIES %s reaches past the proxy's network %s", name, p, edge)
			}
		}
		if !slices.Equal(s.Healthcheck.Test, []string{"CMD", "/usr/local/bin/clinic", "healthcheck"}) {
			t.Errorf("%s: healthcheck %q, want the server's own", name, s.Healthcheck.Test)
		}
		for _, dep := range []string{"postgres", "redis"} {
			if s.DependsOn[dep].Condition != "service_healthy" {
				t.Errorf("%s: does not wait for %s to be healthy", name, dep)
			}
		}
		if c.Services["proxy"].DependsOn[name].Condition != "service_healthy" {
			t.Errorf("the proxy does not wait for %s to be healthy", name)
		}
	}
	for name, s := range c.Services {
		if _, onEdge := networksOf(t, s.Networks)["edge"]; onEdge != (name == "proxy" || strings.HasPrefix(name, "clinic-")) {
			t.Errorf("%s: on the proxy's network %v, want only the proxy and the servers there", name, onEdge)
		}
		if len(s.Ports) > 0 && name != "proxy" {
			t.Errorf("%s publishes %v: only the proxy should be reached from outside", name, s.Ports)
		}
	}
	if !strings.HasPrefix(c.Services["postgres"].Image, "docker.io/library/postgres:15") {
		t.Errorf("postgres image %q, want PostgreSQL 15", c.Services["postgres"].Image)
	}
}

var upstreamRe = regexp.MustCompile(`(?m)^\s*server\s+([a-z0-9-]+):(\d+)`)

// TestNginxConfig runs `nginx -t` on nginx.conf, its upstreams pointed at
// loopback (nginx resolves them while testing, and the compose names
// resolve only inside compose's network).
func TestNginxConfig(t *testing.T) {
	src, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := readCompose(t)
	upstreams := upstreamRe.FindAllStringSubmatch(string(src), -1)
	if len(upstreams) != 2 {
		t.Fatalf("upstream servers %q, want the two of compose.yaml", upstreams)
	}
	conf := string(src)
	for _, u := range upstreams {
		if _, ok := c.Services[u[1]]; !ok || u[2] != "8080" {
			t.Errorf("upstream %s:%s is not a compose service on the image's port 8080", u[1], u[2])
		}
		conf = strings.ReplaceAll(conf, u[1]+":", "127.0.0.1:")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if nginx, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian's nginx; make test-image installs it)")
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nginx, "-t", "-q", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"),
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+";").CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}
