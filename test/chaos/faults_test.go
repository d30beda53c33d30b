package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// rate is the steady stream of creates every fault runs under.
const rate = 25

// Every scenario subscribes two endpoints to order.created: one with the default five attempts,
// and one with a single attempt, which an attempt lost to the infrastructure would drop unsent.
const (
	mainPath = "/main"
	oncePath = "/once"
)

func (s *system) subscribe(b behaviour) []string {
	s.endpoint(mainPath, b, 5)
	s.endpoint(oncePath, b, 1)
	return []string{mainPath, oncePath}
}

// underLoad runs the load at rate while fault runs, then stops it and waits for the answers in flight.
func underLoad(l *load, fault func()) *load {
	underLoadAt(l, rate, fault)
	return l
}

func loadOf(d time.Duration) string {
	return fmt.Sprintf("%d creates/s for %v", rate, d.Round(time.Second))
}

func TestTemporalStoppedAndStartedLosesNothing(t *testing.T) {
	for _, kind := range onBoth {
		t.Run(kind.label(), func(t *testing.T) { temporalStoppedAndStarted(t, kind) })
	}
}

func temporalStoppedAndStarted(t *testing.T, kind temporalKind) {
	s := newSystemOn(t, 0, kind)
	s.startWorker()
	paths := s.subscribe(answerOK)
	outage := dur(10*time.Second, 30*time.Second)
	began := time.Now()
	l := underLoad(newLoad(s), func() {
		time.Sleep(3 * time.Second)
		s.temporal.stop()
		time.Sleep(outage)
		s.temporal.start()
		time.Sleep(3 * time.Second)
	})
	r := s.settle(t, l, kind.scenario(fmt.Sprintf("Temporal stopped for %v, then started", outage)), loadOf(time.Since(began)), paths...)
	if l.classes["2xx"] != r.Written {
		t.Errorf("%d creates answered 201, %d orders written: the API must keep answering 201 while Temporal is down (%s)",
			l.classes["2xx"], r.Written, l.answers())
	}
}

func TestWorkerKilledMidAttemptLosesNothing(t *testing.T) {
	s := newSystem(t, 2*time.Second)
	w := s.startWorker()
	paths := s.subscribe(answerSlowly)
	began := time.Now()
	l := underLoad(newLoad(s), func() {
		time.Sleep(5 * time.Second)
		w.kill() // attempts are in flight: the receiver takes 2 s to answer each
		time.Sleep(2 * time.Second)
		s.startWorker()
		time.Sleep(dur(5*time.Second, 20*time.Second))
	})
	s.settle(t, l, "wds worker SIGKILLed with attempts in flight (receiver answers in 2 s), then started", loadOf(time.Since(began)), paths...)
}

func TestPostgresRestartedUnderServeAndWorker(t *testing.T) {
	s := newSystem(t, 0)
	s.startWorker()
	paths := s.subscribe(answerOK)
	outage := dur(5*time.Second, 30*time.Second)
	var createdAtRestart int
	began := time.Now()
	l := newLoad(s)
	underLoad(l, func() {
		time.Sleep(5 * time.Second)
		if err := s.pg.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(outage)
		s.startPostgres()
		createdAtRestart = l.count("2xx")
		time.Sleep(8 * time.Second)
	})
	r := s.settle(t, l, fmt.Sprintf("PostgreSQL stopped for %v under serve and worker, then started", outage), loadOf(time.Since(began)), paths...)
	if l.classes["503"] == 0 {
		t.Errorf("no request met the outage (%s): the fault did not happen", r.Answers)
	}
	if l.count("2xx") == createdAtRestart {
		t.Errorf("no create succeeded after PostgreSQL came back: wds serve did not recover")
	}
	for _, p := range append([]*proc{s.serve}, s.workers...) {
		if err := p.exited(); err != nil {
			t.Errorf("a process did not survive the outage: %v", err)
		}
	}
}

func TestTwoWorkersStartEveryEventOnce(t *testing.T) {
	for _, kind := range onBoth {
		t.Run(kind.label(), func(t *testing.T) { twoWorkers(t, kind) })
	}
}

func twoWorkers(t *testing.T, kind temporalKind) {
	s := newSystemOn(t, 0, kind)
	s.startWorker()
	s.startWorker()
	paths := s.subscribe(answerOK)
	d := dur(15*time.Second, 60*time.Second)
	l := underLoad(newLoad(s), func() { time.Sleep(d) })
	r := s.settle(t, l, kind.scenario("two wds worker processes (two relays) at once"), loadOf(d), paths...)
	if r.Resent != 0 {
		t.Errorf("%d events were sent twice: a start or an attempt ran twice", r.Resent)
	}
}
