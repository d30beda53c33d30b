package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestIsPublic(t *testing.T) {
	cases := map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "100.64.0.1": false, "::1": false,
		"fe80::1": false, "fc00::1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
		"224.0.0.1": false, "255.255.255.255": false, "192.0.2.10": false, "2001:db8::1": false,
	}
	for s, want := range cases {
		if got := IsPublic(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestCheckHostRefusesLoopbackNames(t *testing.T) {
	for _, h := range []string{"localhost", "127.0.0.1", "::1", "10.0.0.8"} {
		if err := CheckHost(context.Background(), h); !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("CheckHost(%s) = %v, want ErrAddressNotAllowed", h, err)
		}
	}
}

func TestClientRefusesLoopbackAtConnectUnlessAllowed(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	guarded, err := NewClient(Options{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guarded.Get(srv.URL); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("guarded client reached loopback: err = %v", err)
	}

	open, err := NewClient(Options{RootCAs: roots, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("allow-private client: %v", err)
	}
	resp.Body.Close()
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			t.Error("redirect was followed")
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c, err := NewClient(Options{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want 302", resp.StatusCode)
	}
}
