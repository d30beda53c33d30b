package delivery

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted stands where a sealed value was in a receiver's answer.
const Redacted = "[redacted]"

// minPartial is the shortest tail of an excerpt that Redact takes for the start of a secret cut off
// by the excerpt's cap: shorter tails are too likely to be ordinary text.
const minPartial = 8

// Redact replaces, in a receiver's answer, every value the attempt sent that members may not read:
// the endpoint's custom header values and its signing secrets (whole, and their key without the
// whsec_ prefix), as sent and as an echo would escape them (JSON, URL). A receiver or gateway whose
// error page echoes the request's headers would otherwise hand the sealed values to anyone who reads
// the delivery log, and to Temporal's history on a failed attempt. A secret the excerpt's cap cut in
// two is redacted too: the excerpt's tail that starts one.
func Redact(excerpt string, custom map[string]string, keys []string) string {
	if excerpt == "" {
		return ""
	}
	var secrets []string
	for _, v := range custom {
		secrets = append(secrets, v)
	}
	for _, k := range keys {
		secrets = append(secrets, k)
		if rest, ok := strings.CutPrefix(k, "whsec_"); ok {
			secrets = append(secrets, rest)
		}
	}
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		escaped, _ := json.Marshal(s)
		inJSON := string(escaped[1 : len(escaped)-1])
		// Encoders other than Go's also escape the slash.
		forms = append(forms, s, inJSON, strings.ReplaceAll(inJSON, "/", `\/`), url.QueryEscape(s), url.PathEscape(s))
	}
	// Longest first, so a value that holds another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	for _, f := range forms {
		excerpt = strings.ReplaceAll(excerpt, f, Redacted)
	}
	for _, f := range forms {
		for n := min(len(f)-1, len(excerpt)); n >= minPartial; n-- {
			if strings.HasSuffix(excerpt, f[:n]) {
				return excerpt[:len(excerpt)-n] + Redacted
			}
		}
	}
	return excerpt
}
