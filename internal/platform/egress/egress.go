// Package egress makes outbound HTTP requests to addresses chosen by customers safe to send
// (outbound requests are hostile territory): HTTPS only, no redirects, a total timeout, and a dialer that refuses non-public
// addresses at connect time, after DNS resolution, so a name that resolved to a public address when the
// endpoint was registered cannot later be pointed at the internal network (DNS rebinding).
//
// The client resolves names itself, with a Resolver (net.DefaultResolver unless Options name
// another), and dials each answer as an IP address through the guard. Production and tests take
// that one path; a test only swaps the resolver to point a name anywhere at any moment.
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
	// IPv6 forms that embed an IPv4 address, which a translator or a dual-stack host may deliver to
	// that IPv4 address (a private one included); none is globally routable: IPv4-compatible
	// (deprecated), IPv4-translated (SIIT), and both NAT64 prefixes. IPv4-mapped is Unmap's.
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("fec0::/10"), // site-local, deprecated but still routed inside some sites
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

// Resolver answers the addresses of a host name. *net.Resolver satisfies it; tests inject one that
// answers what they need (a public address at registration and a private one at delivery).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lookup answers an IP literal itself and asks r (nil: net.DefaultResolver) for a name.
func lookup(ctx context.Context, r Resolver, network, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, network, host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, err
}

// CheckHost resolves host with r (nil: net.DefaultResolver) and fails with ErrAddressNotAllowed when
// any of its addresses is not public: a receiver behind a name must not be able to switch between an
// internal and a public answer. It is the registration-time check; the client's dialer checks again
// the address it connects to.
func CheckHost(ctx context.Context, r Resolver, host string) error {
	addrs, err := lookup(ctx, r, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, ip := range addrs {
		if !IsPublic(ip) {
			if ip.String() == host {
				return fmt.Errorf("%w: %s is not a public address", ErrAddressNotAllowed, ip)
			}
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
	// Resolver answers host names (nil: net.DefaultResolver). Whatever it answers, every address is
	// checked as it is connected to.
	Resolver Resolver
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
	d := &dialer{resolver: o.Resolver}
	if !o.AllowPrivate {
		d.conn.Control = refuseNonPublic
	}
	transport := &http.Transport{
		DialContext:           d.DialContext,
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

// dialer resolves with its Resolver and connects to the answers as net.Dialer would (Happy
// Eyeballs: the first answer's address family in turn, the other family in parallel after a short
// delay), each connection through conn, whose Control is the address guard.
type dialer struct {
	resolver Resolver
	conn     net.Dialer
}

// fallbackDelay is net.Dialer's default head start of the first address family.
const fallbackDelay = 300 * time.Millisecond

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ipNetwork := "ip"
	switch network {
	case "tcp4":
		ipNetwork = "ip4"
	case "tcp6":
		ipNetwork = "ip6"
	}
	addrs, err := lookup(ctx, d.resolver, ipNetwork, host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	var primaries, fallbacks []string
	for _, ip := range addrs {
		if ip.Unmap().Is4() == addrs[0].Unmap().Is4() {
			primaries = append(primaries, net.JoinHostPort(ip.String(), port))
		} else {
			fallbacks = append(fallbacks, net.JoinHostPort(ip.String(), port))
		}
	}
	if len(fallbacks) == 0 {
		return d.dialSerial(ctx, network, primaries)
	}
	return d.dialParallel(ctx, network, primaries, fallbacks)
}

// dialParallel races the primaries against the fallbacks, which start after fallbackDelay or as
// soon as every primary has failed; the first connection wins and a later one is closed.
func (d *dialer) dialParallel(ctx context.Context, network string, primaries, fallbacks []string) (net.Conn, error) {
	type result struct {
		conn    net.Conn
		err     error
		primary bool
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, 2) // buffered: a racer never blocks after dialParallel returned
	race := func(primary bool, addrs []string) {
		c, err := d.dialSerial(ctx, network, addrs)
		results <- result{c, err, primary}
	}
	go race(true, primaries)
	timer := time.NewTimer(fallbackDelay)
	defer timer.Stop()
	started, pending := false, 1
	var firstErr error
	closeLate := func() {
		// The loser may still connect: close what it brings.
		for ; pending > 0; pending-- {
			if r := <-results; r.conn != nil {
				r.conn.Close()
			}
		}
	}
	for {
		select {
		case <-timer.C:
			if !started {
				started, pending = true, pending+1
				go race(false, fallbacks)
			}
		case r := <-results:
			pending--
			if r.err == nil {
				cancel()
				go closeLate()
				return r.conn, nil
			}
			if r.primary || firstErr == nil {
				firstErr = r.err
			}
			if !started {
				started, pending = true, pending+1
				go race(false, fallbacks)
			} else if pending == 0 {
				return nil, firstErr
			}
		}
	}
}

// dialSerial tries the addresses in turn, giving each a share of the time left (at least 2 s, as
// net.Dialer does), and answers the first error when none connects.
func (d *dialer) dialSerial(ctx context.Context, network string, addrs []string) (net.Conn, error) {
	var firstErr error
	for i, addr := range addrs {
		if err := ctx.Err(); err != nil {
			if firstErr == nil {
				firstErr = &net.OpError{Op: "dial", Net: network, Err: err}
			}
			break
		}
		actx := ctx
		if deadline, ok := ctx.Deadline(); ok {
			share := time.Until(deadline) / time.Duration(len(addrs)-i)
			if share < 2*time.Second {
				share = min(2*time.Second, time.Until(deadline))
			}
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, share)
			defer cancel()
		}
		c, err := d.conn.DialContext(actx, network, addr)
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
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
