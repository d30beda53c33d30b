package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"wds/internal/dev/temporaldev"
)

// lockedBuffer collects log lines written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The secrets sweep for the Temporal worker: the SDK's own log lines (worker start and stop, task
// processing, whatever it reports) at debug level, and ours at trace, captured while
// deliveries fail, retry, drop and succeed under a rotated secret with a grace, to an endpoint whose
// URL carries a token. No signing secret, URL token, key or operator token appears in any form.
func TestTheWorkersOwnLogLinesCarryNoSecret(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	logs := &lockedBuffer{}
	tc, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: "default",
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	h := newHarness(t, tc)
	h.log.SetOutput(logs)
	h.log.SetFormatter(&logrus.JSONFormatter{})
	h.log.SetLevel(logrus.TraceLevel)
	h.startWorker()

	flaky := newReceiver(t, failFirst(2))
	status, out := h.call("/admin/v1/rpc/outbound_webhook_create", h.ownerToken, map[string]any{
		"p_url": flaky.srv.URL + "/hooks?token=sekrit-url-token-0451", "p_event_types": []string{"order.created"}, "p_max_attempts": 5})
	if status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", status, out)
	}
	first := out["secret"].(string)
	down := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	dropped := h.endpoint(down, 2, "order.created")
	if status, out := h.order("sweep-1"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	waitFor(t, 60*time.Second, "the flaky receiver's third attempt and the dropped chain", func() bool {
		var n int64
		h.db.Raw(`SELECT count(*) FROM webhook_deliveries WHERE status = 'dropped'`).Scan(&n)
		return flaky.count() == 3 && n == 1
	})
	status, out = h.call("/admin/v1/rpc/outbound_webhook_rotate_secret", h.ownerToken, map[string]any{"p_id": out["id"], "p_grace_seconds": 3600})
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %v", status, out)
	}
	second := out["secret"].(string)
	if status, out := h.order("sweep-2"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	waitFor(t, 60*time.Second, "the delivery signed with both secrets", func() bool { return flaky.count() == 4 })
	h.stop() // the worker's shutdown lines too

	all := logs.String()
	if !strings.Contains(all, "Started Worker") || !strings.Contains(all, "webhook worker started") {
		t.Fatalf("the capture holds no SDK or worker line; the sweep would prove nothing:\n%.2000s", all)
	}
	for what, secret := range map[string]string{"the first signing secret": first, "the rotated secret": second,
		"the dropped endpoint's secret": dropped.secret, "the URL's token": "sekrit-url-token-0451",
		"the operator token": h.ownerToken, "the read key": h.readWriteKey, "the integration key": h.integrationKey} {
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)),
			base64.RawURLEncoding.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(secret))} {
			if i := strings.Index(all, form); i >= 0 {
				t.Errorf("%s is in the worker's log: %.300s", what, all[max(0, i-150):])
			}
		}
	}
}
