package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortsAreDistinctAndBindable(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address handed out cannot be bound: %v", err)
	}
	_ = l.Close()
	if _, port, _ := net.SplitHostPort(addr); port == "" || port == strconv.Itoa(0) {
		t.Fatalf("address %q has no port", addr)
	}
}
