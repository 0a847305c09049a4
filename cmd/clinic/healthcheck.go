package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks the server on this machine whether it is ready: exit 0
// when /readyz answers 200, an error of one line otherwise. Container
// engines run it as the probe, since the OCI image format keeps no
// HEALTHCHECK and the image holds no shell or curl to run one with.
func healthcheck(ctx context.Context, addr string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("url", "", "the URL to ask (default: /readyz on the port of ADDR, on loopback)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	if *url == "" {
		u, err := readyURL(addr)
		if err != nil {
			return err
		}
		*url = u
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("healthcheck: %s: no answer within %s", *url, *timeout)
		}
		return fmt.Errorf("healthcheck: %s: %w", *url, err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", *url, res.Status)
	}
	fmt.Fprintf(stdout, "ready: %s answered %s\n", *url, res.Status)
	return nil
}

// readyURL is /readyz on the server's own port: ADDR's host when it names
// one, loopback when the server listens on every address (":8080",
// "0.0.0.0:8080", "[::]:8080").
func readyURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("healthcheck: ADDR=%q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
