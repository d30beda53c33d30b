package webhook_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"wds/webhook"
)

// vector is a known answer: the headers wds sends for body signed with secret at t, as event (or
// test delivery) id. The headers were computed outside Go, with openssl: X-PC-Signature over the
// UTF-8 bytes of secret and "<t>.<body>", webhook-signature over "<id>.<t>.<body>" keyed by the
// bytes the base64 after whsec_ decodes to (hex in $key):
//
//	printf '%s' "$t.$body" | openssl dgst -sha256 -hmac "$secret"
//	printf '%s' "$id.$t.$body" | openssl dgst -sha256 -mac HMAC -macopt hexkey:$key -binary | base64
//
// docs/webhooks.md prints them so receivers in any language can check themselves.
type vector struct {
	name, secret string
	t            int64
	body, header string
	id, standard string // webhook-id and webhook-signature
}

var vectors = []vector{
	{
		name:     "a short body",
		secret:   "whsec_5Zx9cTq3Lr8yVb2NwPk4Hd7Jm1Ga6Fe0Su9Xo3Ri2Ty",
		t:        1700000000,
		body:     `{"id":"o_1","total_cents":1250}`,
		header:   "t=1700000000,v1=4b10f0f2b5c34952e5bc964bda946be29dbff99cce08995c81b11530d0780639",
		id:       "0a7c3e1d-5b2f-4c6a-8e9d-1f2a3b4c5d6e",
		standard: "v1,vz5ej+3i93/HBP6RtCH0YuVGnm2uapva/V91rjPOMks=",
	},
	{
		name:   "a webhook.test event",
		secret: "whsec_bPE_e5DN-TGC5blbvm_B_hwyacej94L-8CbwSW71KTE",
		t:      1795591800,
		body: `{"id":null,"type":"webhook.test","created_at":"2026-11-25T07:30:00Z",` +
			`"org_id":"5b0e7c1a-2f3d-4c8e-9a6b-0d1e2f3a4b5c","store_id":null,"data":{"endpoint_id":` +
			`"94d0c1b2-3a4e-4f5a-8b6c-7d8e9f0a1b2c","message":"This is a test event from Workspace Data Service."}}`,
		header:   "t=1795591800,v1=fcfd6a63eb191fed7529692e364c926fa4630866e5ab7a9f4a149fccb8a156aa",
		id:       "0098f3b1-4c2d-4e5f-9a6b-7c8d9e0f1a2b", // the delivery id: a test event has none
		standard: "v1,QIqSnFpyMt+ufG5vZ1kD060LwLWB14SREAD2G4yn7r8=",
	},
	{
		name:     "a body beyond ASCII (sign its UTF-8 bytes)",
		secret:   "whsec_bPE_e5DN-TGC5blbvm_B_hwyacej94L-8CbwSW71KTE",
		t:        1795591801,
		body:     `{"name":"Zoë Müller","note":"€12.50 ☕"}`,
		header:   "t=1795591801,v1=cd6a2a1e006ee358b9b2b8dbd055b8aa18a2a0cb01d603753fc1ec430498b726",
		id:       "c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f",
		standard: "v1,F01u9lmHDdTw2S2h9RKzPASln08Ub0QXHZqG53rZV2I=",
	},
	{
		// The secrets above are of the older form (unpadded base64url); this one is of the form
		// wds makes now, standard padded base64, which every Standard Webhooks library accepts.
		name:     "a secret made now (standard base64)",
		secret:   "whsec_N0LKYl0gRqU+S1vWAEHpXL7TYM3GC6y2OM7QqcIg/t0=",
		t:        1795591802,
		body:     `{"id":"o_2","total_cents":990}`,
		header:   "t=1795591802,v1=ec21d3243d639fbc5cc02bceefeb56d3e37c81709e876a41167ef7b886273765",
		id:       "6b1f3c2a-9d4e-4a7b-8c5d-2e3f4a5b6c7d",
		standard: "v1,uV0uSfgx7ICCF5QX8Iv0BwOhQznk01RuCHKVXp7zTIk=",
	},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			if got := webhook.Sign(v.secret, time.Unix(v.t, 0), []byte(v.body)); got != v.header {
				t.Errorf("Sign = %q, want %q", got, v.header)
			}
			if err := webhook.Verify(v.secret, v.header, []byte(v.body), time.Unix(v.t, 0)); err != nil {
				t.Errorf("Verify = %v", err)
			}
			if got, err := webhook.SignStandard(v.id, time.Unix(v.t, 0), []byte(v.body), v.secret); err != nil || got != v.standard {
				t.Errorf("SignStandard = %q, %v; want %q", got, err, v.standard)
			}
			ts := strconv.FormatInt(v.t, 10)
			if err := webhook.VerifyStandard(v.secret, v.id, ts, v.standard, []byte(v.body), time.Unix(v.t, 0)); err != nil {
				t.Errorf("VerifyStandard = %v", err)
			}
			for name, h := range map[string]http.Header{
				"both":          {"X-Pc-Signature": {v.header}, "Webhook-Id": {v.id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {v.standard}},
				"X-PC only":     {"X-Pc-Signature": {v.header}},
				"Standard only": {"Webhook-Id": {v.id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {v.standard}},
			} {
				if ev, err := webhook.ParseHeaders(v.secret, h, []byte(v.body), time.Unix(v.t, 0)); err != nil || ev == nil {
					t.Errorf("ParseHeaders with %s = %v", name, err)
				}
			}
		})
	}
}

// docBlock is how docs/webhooks.md prints a vector: the body after "body:   " is the exact
// bytes signed (no trailing newline).
func (v vector) docBlock() string {
	return fmt.Sprintf("secret: %s\nt:      %d\nbody:   %s\nheader: X-PC-Signature: %s\nheader: webhook-id: %s\nheader: webhook-timestamp: %d\nheader: webhook-signature: %s\n",
		v.secret, v.t, v.body, v.header, v.id, v.t, v.standard)
}

func TestVectorsInDocs(t *testing.T) {
	doc := readFile(t, "../docs/webhooks.md")
	for _, v := range vectors {
		if !strings.Contains(doc, v.docBlock()) {
			t.Errorf("docs/webhooks.md lacks the vector %q; print it as:\n%s", v.name, v.docBlock())
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
