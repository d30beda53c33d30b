// Package freeport hands out loopback ports that are free when asked for, each at most once per
// process.
//
// Binding port 0 and closing the listener proves a port free, but the kernel may hand the same port
// to the next bind: two calls in a row then name one port for two listeners (a test saw `wds serve`
// refuse a metrics address equal to its HTTP address). Remembering what this process handed out
// rules that out; another process can still take a port between the answer and its use.
package freeport

import (
	"fmt"
	"net"
	"sync"
)

var (
	mu     sync.Mutex
	issued = map[int]bool{}
)

// Port is a loopback TCP port free right now and not handed out before by this process.
func Port() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	// Keep the refused listeners open until the end, so the kernel cannot offer them again.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		held = append(held, l)
		if p := l.Addr().(*net.TCPAddr).Port; !issued[p] {
			issued[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("find a free port: every port offered was handed out before")
}

// Addr is "127.0.0.1:<port>" for a Port.
func Addr() (string, error) {
	p, err := Port()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", p), nil
}
