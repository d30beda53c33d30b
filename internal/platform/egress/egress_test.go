package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"

	"wds/internal/platform/egress/egresstest"
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
		if err := CheckHost(context.Background(), nil, h); !errors.Is(err, ErrAddressNotAllowed) {
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

// The registration check asks the injected resolver and refuses a name if any answer is not public.
func TestCheckHostAsksTheResolver(t *testing.T) {
	dns := &egresstest.Resolver{}
	dns.Set("public.example", "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")
	dns.Set("private.example", "10.0.0.7")
	dns.Set("mapped.example", "::ffff:127.0.0.1")
	dns.Set("mixed.example", "93.184.216.34", "192.168.1.1")
	ctx := context.Background()
	if err := CheckHost(ctx, dns, "public.example"); err != nil {
		t.Fatalf("public name: %v", err)
	}
	for _, h := range []string{"private.example", "mapped.example", "mixed.example"} {
		if err := CheckHost(ctx, dns, h); !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("CheckHost(%s) = %v, want ErrAddressNotAllowed", h, err)
		}
	}
	var dnsErr *net.DNSError
	if err := CheckHost(ctx, dns, "unknown.example"); errors.Is(err, ErrAddressNotAllowed) || !errors.As(err, &dnsErr) {
		t.Fatalf("unknown name: %v", err)
	}
	if dns.Asked("public.example") != 1 {
		t.Fatal("the resolver was not asked")
	}
}

// The client resolves with the injected resolver and the guard refuses every non-public answer at
// connect time, whatever the name resolved to before (DNS rebinding).
func TestClientGuardsWhatTheResolverAnswersAtConnect(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	u, _ := url.Parse(srv.URL)
	// The test certificate covers *.example.com, so only the guard can stop these requests.
	target := "https://rebind.example.com:" + u.Port() + "/"
	dns := &egresstest.Resolver{}
	guarded, err := NewClient(Options{RootCAs: roots, Resolver: dns})
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range [][]string{{"127.0.0.1"}, {"::ffff:127.0.0.1"}, {"169.254.169.254"}, {"::1", "127.0.0.1"}, {"10.1.2.3", "127.0.0.1"}} {
		dns.Set("rebind.example.com", "93.184.216.34")
		if err := CheckHost(context.Background(), dns, "rebind.example.com"); err != nil {
			t.Fatal(err)
		}
		dns.Set("rebind.example.com", answer...)
		asked := dns.Asked("rebind.example.com")
		if _, err := guarded.Get(target); !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("resolving to %v: err = %v, want ErrAddressNotAllowed", answer, err)
		}
		if dns.Asked("rebind.example.com") == asked {
			t.Errorf("resolving to %v: the client did not ask the resolver", answer)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the guarded client reached the receiver %d times", n)
	}

	// The same resolver and dialer without the guard connect: the answers above were really dialed.
	open, err := NewClient(Options{RootCAs: roots, Resolver: dns, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range [][]string{{"127.0.0.1"}, {"::ffff:127.0.0.1"}, {"::1", "127.0.0.1"}} {
		dns.Set("rebind.example.com", answer...)
		open.CloseIdleConnections()
		resp, err := open.Get(target)
		if err != nil {
			t.Fatalf("allow-private client resolving to %v: %v", answer, err)
		}
		resp.Body.Close()
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("%d requests reached the receiver, want 3", n)
	}
}

// A name the resolver does not know fails as a DNS error, not as the guard.
func TestClientReportsResolverFailures(t *testing.T) {
	c, err := NewClient(Options{Resolver: &egresstest.Resolver{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get("https://nowhere.example/")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("err = %v, want a DNS error", err)
	}
}

// Every IPv6 form that embeds an IPv4 address, or that is not globally routable, is refused: a
// receiver's DNS answer in one of them would otherwise reach the private IPv4 inside it (or a
// site-local network), and public addresses stay allowed.
func TestIsPublicRefusesIPv6FormsOfIPv4AndSiteLocal(t *testing.T) {
	cases := []struct {
		addr string
		want bool
		why  string
	}{
		{"::10.0.0.1", false, "IPv4-compatible (::/96) form of a private address"},
		{"::127.0.0.1", false, "IPv4-compatible form of loopback"},
		{"::8.8.8.8", false, "IPv4-compatible form: deprecated, never routed"},
		{"::ffff:0:10.0.0.1", false, "IPv4-translated (::ffff:0:0:0/96) form of a private address"},
		{"::ffff:0:169.254.169.254", false, "IPv4-translated form of the metadata address"},
		{"::ffff:0:8.8.8.8", false, "IPv4-translated form: SIIT only, never routed"},
		{"::ffff:10.0.0.1", false, "IPv4-mapped form of a private address"},
		{"::ffff:8.8.8.8", true, "IPv4-mapped form of a public address is that address"},
		{"64:ff9b::10.0.0.1", false, "NAT64 (64:ff9b::/96) form of a private address"},
		{"64:ff9b::169.254.169.254", false, "NAT64 form of the metadata address"},
		{"64:ff9b::8.8.8.8", false, "NAT64 form: the well-known prefix is not globally routable"},
		{"64:ff9b:1::a00:1", false, "local-use NAT64 (64:ff9b:1::/48)"},
		{"fec0::1", false, "site-local (fec0::/10)"},
		{"feff:ffff::1", false, "site-local, top of the range"},
		{"fc00::1", false, "unique local"},
		{"2606:4700:4700::1111", true, "global unicast"},
		{"2a00:1450:4001:80b::200e", true, "global unicast"},
	}
	for _, c := range cases {
		if got := IsPublic(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("IsPublic(%s) = %v, want %v: %s", c.addr, got, c.want, c.why)
		}
	}
}
