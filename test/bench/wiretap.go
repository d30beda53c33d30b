package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// wireTap sits between a process and PostgreSQL and records how the process's statements travel:
// which were sent together, in one round trip (a pgx batch, pipelined: any number of Execute
// messages, then one Sync), and which alone. PostgreSQL's log gives each statement and its
// parameters but not that; the replay must send a batch as a batch too (replay.go), or it would
// compare one round trip against several.
type wireTap struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	sent   map[int][]sentStatement // by backend pid, in the order sent
	trips  int                     // round trips seen, to number them
}

// sentStatement is a statement as the tap saw it go: its text, as the log prints it, and the round
// trip it went in.
type sentStatement struct {
	sql  string
	trip int
}

// newWireTap listens on a loopback port and forwards each connection to target (host:port).
func newWireTap(target string) (*wireTap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: wire tap: %w", err)
	}
	t := &wireTap{ln: ln, target: target, sent: map[int][]sentStatement{}}
	go t.serve()
	return t, nil
}

// addr is where clients connect instead of PostgreSQL (with sslmode=disable, so the stream is
// readable).
func (t *wireTap) addr() string { return t.ln.Addr().String() }

func (t *wireTap) close() error { return t.ln.Close() }

func (t *wireTap) serve() {
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		go t.relay(c)
	}
}

// relay forwards one connection both ways, reading the server's side until it names the backend's
// pid (BackendKeyData) and the client's side throughout.
func (t *wireTap) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", t.target)
	if err != nil {
		return
	}
	defer server.Close()
	pid := make(chan int, 1)
	go func() {
		_ = readPid(io.TeeReader(server, client), pid)
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	_ = t.readClient(io.TeeReader(client, server), pid)
}

// readPid reads server messages until BackendKeyData and sends its pid.
func readPid(r io.Reader, pid chan<- int) error {
	for {
		typ, body, err := readMessage(r)
		if err != nil {
			return err
		}
		if typ == 'K' && len(body) >= 4 {
			pid <- int(binary.BigEndian.Uint32(body))
			return nil
		}
	}
}

// readClient reads the client's messages: the start-up packet, then typed messages. A Parse names a
// statement's text, an Execute runs it (PostgreSQL logs it then), and a Sync or a simple Query ends
// a round trip.
func (t *wireTap) readClient(r io.Reader, pidc <-chan int) error {
	br := bufio.NewReader(r)
	var size [4]byte
	if _, err := io.ReadFull(br, size[:]); err != nil { // the start-up packet has no type byte
		return err
	}
	if _, err := io.CopyN(io.Discard, br, int64(binary.BigEndian.Uint32(size[:]))-4); err != nil {
		return err
	}
	pid := -1
	prepared := map[string]string{} // statement name -> text
	portals := map[string]string{}  // portal name -> text
	var trip []string
	for {
		typ, body, err := readMessage(br)
		if err != nil {
			return err
		}
		if pid < 0 {
			pid = learnPid(pidc, typ == 'S' || typ == 'Q')
		}
		switch typ {
		case 'P': // Parse: name, text, ...
			name, rest := cstring(body)
			text, _ := cstring(rest)
			prepared[name] = text
		case 'B': // Bind: portal, statement, ...
			portal, rest := cstring(body)
			stmt, _ := cstring(rest)
			portals[portal] = prepared[stmt]
		case 'E':
			portal, _ := cstring(body)
			trip = append(trip, portals[portal])
		case 'S':
			t.record(pid, trip)
			trip = nil
		case 'Q':
			text, _ := cstring(body)
			t.record(pid, append(trip, text))
			trip = nil
		case 'X':
			return nil
		}
	}
}

// learnPid takes the backend's pid if readPid has it, or -1. A Sync or a Query, which ends a round
// trip recorded under the pid, waits for it: the client sends them only after the server's
// ReadyForQuery, which follows BackendKeyData, so the pid is at most a moment behind (the time
// readPid takes to parse what it already relayed). Other messages (a password) must not wait: the
// server names the pid only once they are through.
func learnPid(pidc <-chan int, endsTrip bool) int {
	select {
	case pid := <-pidc:
		return pid
	default:
	}
	if !endsTrip {
		return -1
	}
	select {
	case pid := <-pidc:
		return pid
	case <-time.After(time.Second):
		return -1
	}
}

// record adds one round trip's statements, if it sent any.
func (t *wireTap) record(pid int, trip []string) {
	if len(trip) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trips++
	for _, sql := range trip {
		// PostgreSQL's log indents each line of a statement after the first with a tab.
		t.sent[pid] = append(t.sent[pid], sentStatement{strings.ReplaceAll(sql, "\n", "\n\t"), t.trips})
	}
}

// mark is how many statements each connection has sent so far: statements logged later are matched
// to those sent after it (tripsOf).
func (t *wireTap) mark() map[int]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[int]int, len(t.sent))
	for pid, s := range t.sent {
		m[pid] = len(s)
	}
	return m
}

// tripsOf sets the round trip of each logged statement: the next statement of the same text its
// connection sent after the mark, which advances past it. A statement not seen sent (none should be)
// keeps trip 0, a round trip of its own.
func (t *wireTap) tripsOf(sts []loggedStatement, mark map[int]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, st := range sts {
		sent := t.sent[st.pid]
		j := mark[st.pid]
		for j < len(sent) && sent[j].sql != st.sql {
			j++
		}
		if j < len(sent) {
			sts[i].trip = sent[j].trip
			mark[st.pid] = j + 1
		}
	}
}

// readMessage reads a typed protocol message.
func readMessage(r io.Reader) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(head[1:])) - 4
	if n < 0 {
		return 0, nil, errors.New("bench: wire tap: bad message length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return head[0], body, err
}

// cstring splits a NUL-terminated string off b.
func cstring(b []byte) (string, []byte) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:]
		}
	}
	return string(b), nil
}
