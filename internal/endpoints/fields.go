// The support desk's endpoint fields: a rate limit and custom headers (the health is health.go's)
// (docs/support.md).

package endpoints

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"wds/internal/deliverylog"
	"wds/internal/platform/problem"
	"wds/models"
)

// Limits of an endpoint's rate limit and custom headers.
const (
	MaxRateLimit      = 1000
	MaxHeaders        = 10
	MaxHeaderValueLen = 1024
	maxHeaderNameLen  = 256
)

// headerName is an HTTP field name (RFC 9110's token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// reservedHeaders are the names a custom header may not set, in lower case: the request's own
// framing, the names the signature and the receiver's checks rely on, and hop-by-hop names, which a
// proxy would strip anyway. Every X-PC-* name is reserved too, and the Standard Webhooks ones.
var reservedHeaders = []string{"content-type", "content-length", "host", "user-agent", "connection",
	"webhook-id", "webhook-timestamp", "webhook-signature",
	"keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
	"transfer-encoding", "upgrade"}

// validHeaders checks a set of custom headers and returns it in a new map (never nil).
func validHeaders(in map[string]string) (models.Headers, error) {
	if len(in) > MaxHeaders {
		return nil, problem.Fail(ErrInvalidParameter, "headers: at most %d names, not %d", MaxHeaders, len(in))
	}
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names) // the first offending name is the same every time
	out := models.Headers{}
	seen := map[string]bool{}
	for _, name := range names {
		value, lower := in[name], strings.ToLower(name)
		switch {
		case len(name) > maxHeaderNameLen || !headerName.MatchString(name):
			return nil, problem.Fail(ErrInvalidParameter, "headers: %q is not a valid header name", name)
		case strings.HasPrefix(lower, "x-pc-") || slices.Contains(reservedHeaders, lower):
			return nil, problem.Fail(ErrInvalidParameter, "headers: %s is set by the service and cannot be overridden", name)
		case seen[lower]:
			return nil, problem.Fail(ErrInvalidParameter, "headers: %s is named twice (names are case-insensitive)", name)
		case len(value) > MaxHeaderValueLen:
			return nil, problem.Fail(ErrInvalidParameter, "headers: the value of %s is longer than %d bytes", name, MaxHeaderValueLen)
		case !utf8.ValidString(value):
			return nil, problem.Fail(ErrInvalidParameter, "headers: the value of %s is not valid UTF-8", name)
		case fieldValueError(value) != "":
			return nil, problem.Fail(ErrInvalidParameter, "headers: the value of %s %s; a value is visible characters, with spaces or tabs only between them (RFC 9110)", name, fieldValueError(value))
		}
		seen[lower] = true
		out[name] = value
	}
	return out, nil
}

// fieldValueError says why v is not an HTTP field-value (RFC 9110 section 5.5), or "" when it is one:
// visible ASCII, bytes from 0x80 up (obs-text; the caller has checked it is UTF-8), and spaces and tabs
// between them but never at either end, where they are not part of the value (Go's client would trim
// them). Any other control character makes Go's client refuse the whole request, so one stored would
// fail every delivery to the endpoint until it is disabled. The answer names the byte and where it
// is, never the value, which may be a credential.
func fieldValueError(v string) string {
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case (b == ' ' || b == '\t') && (i == 0 || i == len(v)-1):
			return "starts or ends with a space or tab"
		case (b < 0x20 && b != '\t') || b == 0x7f:
			return fmt.Sprintf("contains the control character %#02x at byte %d", b, i+1)
		}
	}
	return ""
}

// validRateLimit checks a rate limit; nil is none.
func validRateLimit(n *int) error {
	if n != nil && (*n < 1 || *n > MaxRateLimit) {
		return problem.Fail(problem.Invalid, "rate_limit must be from 1 to %d deliveries a second, or null for none", MaxRateLimit)
	}
	return nil
}

// showHeaders fills in the header values of eps for an owner or admin (manager) and leaves everyone
// else the names with blank values: the values may be credentials. A service without the encryption
// key (the database-only CLI's reads) shows the names alone too, and so does one whose key does not
// open the set (sealed under a key missing from WDS_ENCRYPTION_KEY_PREVIOUS): the endpoint stays
// listed and manageable while its deliveries fail, as they do when its signing secret does not open.
func (s *Service) showHeaders(manager bool, eps ...*models.Endpoint) {
	for _, ep := range eps {
		ep.Headers = deliverylog.VisibleHeaders(s.Box, manager, ep.Headers, ep.HeadersSealed)
	}
}
