// Package egresstest has a resolver for tests of the address guard: its answers come from a table
// the test changes as it goes, so a name can resolve to a public address when an endpoint is
// registered and to an internal one when a delivery connects (DNS rebinding).
package egresstest

import (
	"context"
	"net"
	"net/netip"
	"sync"
)

// Resolver is an egress.Resolver answering from a table. The zero value answers nothing.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	asked   map[string]int
}

// Set makes host resolve to addrs (IP literals) from now on.
func (r *Resolver) Set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answers == nil {
		r.answers = map[string][]netip.Addr{}
	}
	r.answers[host] = nil
	for _, a := range addrs {
		r.answers[host] = append(r.answers[host], netip.MustParseAddr(a))
	}
}

// Asked says how many times host was looked up.
func (r *Resolver) Asked(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[host]
}

// LookupNetIP answers host's addresses of network's family ("ip", "ip4" or "ip6"), or a not-found
// DNS error for a host it has no answer for.
func (r *Resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.asked == nil {
		r.asked = map[string]int{}
	}
	r.asked[host]++
	var out []netip.Addr
	for _, a := range r.answers[host] {
		if network == "ip" || (network == "ip4") == a.Unmap().Is4() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}
