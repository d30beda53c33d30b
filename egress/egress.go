// Package egress makes outbound HTTP requests to addresses chosen by customers safe to send
// (outbound requests are hostile territory): HTTPS only, no redirects, a total timeout, and a dialer that refuses non-public
// addresses at connect time, after DNS resolution, so a name that resolved to a public address when the
// endpoint was registered cannot later be pointed at the internal network (DNS rebinding).
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// ErrAddressNotAllowed is returned when a connection would reach a non-public address.
var ErrAddressNotAllowed = errors.New("address_not_allowed")

// Timeout bounds a whole request: connect, TLS, headers and reading the (capped) body.
const Timeout = 10 * time.Second

// nonPublic lists ranges that are not the public internet beyond what netip's predicates cover:
// shared address space (carrier-grade NAT), benchmarking, documentation, "this network", 6to4 relay,
// NAT64 and other special-purpose blocks of the IANA registries.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// IsPublic reports whether ip is a globally routable unicast address.
func IsPublic(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is loopback too
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() ||
		ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckHost resolves host and fails with ErrAddressNotAllowed when any of its addresses is not public:
// a receiver behind a name must not be able to switch between an internal and a public answer.
func CheckHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !IsPublic(ip) {
			return fmt.Errorf("%w: %s is not a public address", ErrAddressNotAllowed, ip)
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, ip := range addrs {
		if !IsPublic(ip) {
			return fmt.Errorf("%w: %s resolves to %s", ErrAddressNotAllowed, host, ip.Unmap())
		}
	}
	return nil
}

// Options configure the outbound client.
type Options struct {
	// AllowPrivate lets the client reach loopback and private addresses (development, tests).
	AllowPrivate bool
	// CAFiles are extra PEM bundles trusted besides the system roots (WDS_WEBHOOK_CA_FILE, and under
	// `wds dev` its local CA).
	CAFiles []string
	// RootCAs replaces the system roots when set (tests that trust one receiver).
	RootCAs *x509.CertPool
}

// NewClient builds the HTTP client deliveries are sent with.
func NewClient(o Options) (*http.Client, error) {
	roots := o.RootCAs
	if roots == nil {
		var err error
		if roots, err = x509.SystemCertPool(); err != nil {
			roots = x509.NewCertPool()
		}
	}
	for _, file := range o.CAFiles {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", file)
		}
	}
	dialer := &net.Dialer{Timeout: Timeout}
	if !o.AllowPrivate {
		dialer.Control = refuseNonPublic
	}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   Timeout,
		ResponseHeaderTimeout: Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
		// No proxy from the environment: a proxy would hide the real destination from the guard.
		Proxy: nil,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   Timeout,
		// A 3xx is the receiver's answer, not an instruction: following it could lead anywhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// refuseNonPublic runs after name resolution, on the exact address about to be connected to.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %s", ErrAddressNotAllowed, address)
	}
	if !IsPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrAddressNotAllowed, ap.Addr().Unmap())
	}
	return nil
}
