package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
)

// settle waits until nothing is left to run (no event undispatched, no workflow running), then
// counts what each path received against what was written and audits the database. It fails the
// test on anything the contract forbids.
func (s *system) settle(t *testing.T, l *load, scenario, loadDesc string, paths ...string) row {
	t.Helper()
	written := s.writtenEvents(t)
	deadline := time.Now().Add(dur(3*time.Minute, 6*time.Minute))
	for !s.idle(t) {
		if time.Now().After(deadline) {
			t.Errorf("not settled after the deadline")
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second) // a late duplicate would arrive now
	r := row{Scenario: scenario, Load: loadDesc, Written: len(written), Due: len(written) * len(paths), Answers: l.answers()}
	for _, p := range paths {
		tl := s.rcv.tally(p, written)
		r.Delivered += tl.delivered
		r.Resent += tl.resent
		r.Twice += tl.twice
		if tl.badSigs > 0 || tl.badHeaders > 0 || tl.unexpected > 0 {
			t.Errorf("%s: %d POSTs with a bad signature, %d with wrong custom header values, %d of events never written",
				p, tl.badSigs, tl.badHeaders, tl.unexpected)
		}
	}
	r.Lost = r.Due - r.Delivered
	if r.Lost != 0 || r.Twice != 0 {
		t.Errorf("%s: %d deliveries lost, %d side effects applied twice", scenario, r.Lost, r.Twice)
	}
	s.audit(t, l)
	s.noAttemptSpent(t, paths)
	s.noSecretLogged(t)
	record(t, r)
	return r
}

// idle reports that the relay has nothing left to start and no delivery workflow runs.
func (s *system) idle(t *testing.T) bool {
	var undispatched int64
	if err := s.db.Raw("SELECT count(*) FROM event_states WHERE dispatched_at IS NULL").Scan(&undispatched).Error; err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	running, err := s.temporal.client().CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: "ExecutionStatus = 'Running'"})
	return err == nil && undispatched == 0 && running.GetCount() == 0
}

func (s *system) writtenEvents(t *testing.T) map[string]bool {
	var ids []string
	if err := s.db.Raw("SELECT id::text FROM events WHERE type = 'order.created'").Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	written := make(map[string]bool, len(ids))
	for _, id := range ids {
		written[id] = true
	}
	return written
}

// audit checks that nothing is half-written: every order has its lines and exactly one
// order.created, every 201 names an order that exists under its external id, every event started.
func (s *system) audit(t *testing.T, l *load) {
	t.Helper()
	for what, q := range map[string]string{
		"orders without lines": `SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM order_lines l WHERE l.order_id = o.id)`,
		// One pass over each table (a hash join), not a scan of the events per order: at full length
		// on a loaded machine the per-order form outran the statement timeout.
		"orders without exactly one order.created": `SELECT count(*) FROM orders o LEFT JOIN (
			SELECT e.body->'data'->>'id' AS order_id, count(*) AS n FROM events e WHERE e.type = 'order.created' GROUP BY 1
		) c ON c.order_id = o.id::text WHERE coalesce(c.n, 0) <> 1`,
		"external ids naming no order": `SELECT count(*) FROM external_refs r WHERE r.entity_type = 'order'
			AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = r.internal_id)`,
		"events never started": `SELECT count(*) FROM event_states WHERE dispatched_at IS NULL`,
	} {
		var n int64
		if err := s.db.Raw(q).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d %s", n, what)
		}
	}
	var refs []struct{ ExternalID, InternalID string }
	if err := s.db.Raw("SELECT external_id, internal_id::text AS internal_id FROM external_refs WHERE entity_type = 'order'").
		Scan(&refs).Error; err != nil {
		t.Fatal(err)
	}
	stored := make(map[string]string, len(refs))
	for _, r := range refs {
		stored[r.ExternalID] = r.InternalID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ext, id := range l.created {
		if stored[ext] != id {
			t.Errorf("%s was answered 201 with order %s; the database has %q", ext, id, stored[ext])
		}
	}
	for i, p := range l.problems {
		if i == 10 {
			t.Errorf("... and %d more answers that break the contract", len(l.problems)-10)
			break
		}
		t.Errorf("answer that breaks the contract: %s", p)
	}
}

// dur is the short length in make test and the full one in make chaos.
func dur(short, full time.Duration) time.Duration {
	if *long {
		return full
	}
	return short
}

// noAttemptSpent checks the delivery log of the paths, whose receivers always answer 2xx in time
// (failFirstAttempt's after its one 500): every attempt succeeded, but failFirstAttempt's attempt 1.
// Any other failed or dropped row would be an attempt wds spent on its own fault.
func (s *system) noAttemptSpent(t *testing.T, paths []string) {
	t.Helper()
	ids, failFirst := make([]string, len(paths)), []string{""}
	for i, p := range paths {
		ids[i] = s.rcv.endpointID(p)
		if s.rcv.behaviourOf(p) == failFirstAttempt {
			failFirst = append(failFirst, ids[i])
		}
	}
	var rows []struct {
		Status, Error string
		N             int
	}
	if err := s.db.Raw(`SELECT status, error, count(*) AS n FROM webhook_deliveries
		WHERE status <> 'succeeded' AND endpoint_id::text IN ?
		AND NOT (status = 'failed' AND attempt = 1 AND endpoint_id::text IN ?)
		GROUP BY status, error ORDER BY n DESC LIMIT 5`, ids, failFirst).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Errorf("%d attempts recorded %s (%s) by a receiver that always answers 2xx in time", r.N, r.Status, r.Error)
	}
}

// noSecretLogged reads every log line the processes wrote and every audit row: none may hold the
// integration key, the operator token or an endpoint's signing secret.
func (s *system) noSecretLogged(t *testing.T) {
	t.Helper()
	secrets := append([]string{s.key, s.ownerToken}, s.rcv.secrets()...)
	for _, p := range append(append([]*proc{s.serve}, s.workers...), s.retired...) {
		b, err := os.ReadFile(p.logPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range secrets {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s's log holds a secret (%.12s...)", p.name, secret)
			}
		}
	}
	var audit []string
	if err := s.db.Raw("SELECT a::text FROM audit_log a").Scan(&audit).Error; err != nil {
		t.Fatal(err)
	}
	for _, row := range audit {
		for _, secret := range secrets {
			if strings.Contains(row, secret) {
				t.Errorf("an audit row holds a secret (%.12s...)", secret)
			}
		}
	}
}
