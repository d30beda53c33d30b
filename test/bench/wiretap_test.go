package bench

import (
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// message is a typed protocol message.
func message(typ byte, fields ...string) []byte {
	var body []byte
	for _, f := range fields {
		body = append(append(body, f...), 0)
	}
	m := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(m[1:], uint32(len(body)+4))
	return append(m, body...)
}

// TestWireTapSeesWhichStatementsShareARoundTrip: two statements executed before one Sync are one
// round trip, a simple query another; the log's statements (whose lines after the first PostgreSQL
// indents) get those trips, and the replay sends the first two in one pipeline.
func TestWireTapSeesWhichStatementsShareARoundTrip(t *testing.T) {
	server, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	go func() { // a PostgreSQL that names its backend 42 and reads whatever follows
		c, err := server.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		key := message('K', "")
		key = append(key[:5], 0, 0, 0, 42, 0, 0, 0, 7)
		binary.BigEndian.PutUint32(key[1:], 12)
		_, _ = c.Write(key)
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	tap, err := newWireTap(server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tap.close()
	c, err := net.Dial("tcp", tap.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	startup := []byte{0, 0, 0, 8, 0, 3, 0, 0}
	if _, err := c.Write(startup); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 13) // BackendKeyData, relayed
	if _, err := c.Read(head); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, m := range [][]byte{
		message('P', "s1", "begin", "\x00\x00"), message('B', "", "s1"), message('E', ""),
		message('P', "s2", "INSERT\n$1", "\x00\x00"), message('B', "", "s2"), message('E', ""),
		message('S'), message('Q', "commit"),
	} {
		out = append(out, m...)
	}
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	sts := []loggedStatement{{pid: 42, sql: "begin"}, {pid: 42, sql: "INSERT\n\t$1"}, {pid: 42, sql: "commit"}}
	mark := map[int]int{}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if tap.mark()[42] == 3 {
			break
		}
	}
	tap.tripsOf(sts, mark)
	if got := []int{sts[0].trip, sts[1].trip, sts[2].trip}; got[0] == 0 || got[0] != got[1] || got[2] == got[1] || got[2] == 0 {
		t.Fatalf("round trips %v, want the first two together and the third alone", got)
	}
	if got := pipelined(sts); !slices.Equal(got, []bool{false, true, false}) {
		t.Fatalf("pipelined %v", got)
	}
	key := "0b7a3a5e-6e4c-4b4e-9d0f-1f7d2a3b4c5d"
	p := func(v string) []*string { return []*string{&v} }
	b := []loggedStatement{{sql: "begin", trip: 1}, {sql: "INSERT $1", params: p(key), trip: 1}, {sql: "commit", trip: 2}}
	r, err := buildReplay(b, b, "ext-1", []map[string]string{{"id": key}, {"id": "c0ffee00-0000-4000-8000-000000000000"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.script, "\\startpipeline\nbegin\n;\nINSERT :k_id\n;\n\\endpipeline\ncommit\n;\n") {
		t.Fatalf("the replay does not send the batch as one pipeline:\n%s", r.script)
	}
}
