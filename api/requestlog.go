package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
)

// HeaderRequestID carries the request id: accepted from the caller (a proxy or client tracing its
// own calls), generated otherwise, and always echoed so a support ticket can quote it.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLen bounds an accepted id; longer or odd ones are replaced, never truncated, so what
// is logged is either the caller's exact id or ours.
const maxRequestIDLen = 128

const ctxRequestID = "wds.request_id"

// requestID sets the request id before anything can answer, so even a refused request echoes it.
func requestID(c *gin.Context) {
	id := c.GetHeader(HeaderRequestID)
	if !validRequestID(id) {
		id = uuid.NewString()
	}
	c.Set(ctxRequestID, id)
	c.Header(HeaderRequestID, id)
	c.Next()
}

// validRequestID accepts 1..128 characters of letters, digits and . _ : - (UUIDs, ULIDs, trace ids),
// which keeps log lines free of control characters and injected fields.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// requestLog writes one structured line per request: who called (key id, org or operator user, never
// a key or token), what (route pattern and path without the query, secrets cut out), the outcome
// and its duration.
// Server errors are logged at error level with their cause; everything else at info.
func (s *server) requestLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	fields := logrus.Fields{
		"request_id": c.GetString(ctxRequestID),
		"method":     c.Request.Method, "route": c.FullPath(), "path": redactSecrets(c.Request.URL.Path),
		"status": c.Writer.Status(), "duration_ms": float64(time.Since(start).Microseconds()) / 1000,
		"client_ip": c.ClientIP(),
	}
	for field, key := range map[string]string{"key_id": ctxKeyID, "org_id": ctxOrgID, "operator_id": ctxOperator} {
		if v, ok := c.Get(key); ok {
			fields[field] = v
		}
	}
	entry := s.Log.WithFields(fields).WithContext(c.Request.Context()) // the context: its trace id (tracing.LogHook)
	if len(c.Errors) > 0 {
		entry = entry.WithError(c.Errors.Last().Err)
	}
	if c.Writer.Status() >= http.StatusInternalServerError {
		entry.Error("request failed")
		return
	}
	entry.Info("request")
}

// secretPrefixes begin every secret the service hands out.
var secretPrefixes = []string{apikeys.ReadKeyPrefix, apikeys.IntegrationKeyPrefix, workspace.OperatorTokenPrefix,
	catalog.ClaimTokenPrefix, secrets.SigningSecretPrefix}

// redacted replaces what follows a secret's prefix in a logged path.
const redacted = "[redacted]"

// redactSecrets cuts every secret out of a request path, keeping its prefix so the line still says
// what kind of thing was pasted there. Callers put secrets in paths by mistake (a key where an id
// goes, a claim token in a link a supplier clicks, a key as an external id) and the path is logged
// for every request, 404s included. Paths without an underscore, nearly all of them, cost one scan.
func redactSecrets(path string) string {
	if !strings.Contains(path, "_") {
		return path
	}
	for _, prefix := range secretPrefixes {
		for from := 0; ; {
			i := strings.Index(path[from:], prefix)
			if i < 0 {
				break
			}
			start := from + i + len(prefix)
			end := start
			for end < len(path) && (keyChar(path[end]) || prefix == secrets.SigningSecretPrefix && signingChar(path[end])) {
				end++
			}
			if end > start {
				path = path[:start] + redacted + path[end:]
			}
			from = start
		}
	}
	return path
}

// keyChar is a character of unpadded base64url, the alphabet of every secret after its prefix.
func keyChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// signingChar is what standard padded base64 adds to keyChar: signing secrets are made in that form
// (docs/webhooks.md#standard-webhooks), so a '/' in one cuts no redaction short (it redacts the rest of the path too).
func signingChar(b byte) bool { return b == '+' || b == '/' || b == '=' }
