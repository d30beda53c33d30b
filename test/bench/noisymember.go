package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// noisyMember is a member of org A who reads in a loop what grows with A's history: the org's
// delivery log by a status rare in it, an endpoint's log, and the console's overview (its charts
// and its latest problems), as a dashboard reloading or a script would. Each read takes A's turn at
// its reads; a read the pace refuses (429) is counted apart, not as an error.
type noisyMember struct {
	client   *http.Client
	base     string
	t        *tenant
	endpoint uuid.UUID
	cookie   string // the console session
	paced    atomic.Int64
}

// csrfField is the console form's hidden token.
var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// newNoisyMember signs A's owner in to the console, as a browser does: the sign-in form's
// pre-session cookie and token, then the token posted.
func newNoisyMember(ctx context.Context, base string, t *tenant, endpoint uuid.UUID) (*noisyMember, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	m := &noisyMember{client: client, base: base, t: t, endpoint: endpoint}
	form, err := m.get(ctx, "/console/login", "")
	if err != nil {
		return nil, err
	}
	token := csrfField.FindStringSubmatch(form.body)
	if token == nil || form.cookies == "" {
		return nil, fmt.Errorf("bench: the console's sign-in form has no token or pre-session cookie")
	}
	body := url.Values{"token": {t.token}, "csrf": {token[1]}}.Encode()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/console/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", form.cookies)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: console sign-in: %w", err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Value != "" && !strings.HasSuffix(c.Name, "_login") {
			m.cookie = c.Name + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || m.cookie == "" {
		return nil, fmt.Errorf("bench: console sign-in answered %d with no session", resp.StatusCode)
	}
	return m, nil
}

type memberAnswer struct {
	status  int
	body    string
	cookies string
}

func (m *noisyMember) get(ctx context.Context, path, cookie string) (memberAnswer, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	} else if strings.HasPrefix(path, "/admin/") {
		req.Header.Set("Authorization", "Bearer "+m.t.token)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return memberAnswer{}, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var cookies []string
	for _, c := range resp.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	return memberAnswer{status: resp.StatusCode, body: string(b), cookies: strings.Join(cookies, "; ")}, nil
}

// op is one member's loop: the three reads in turn.
func (m *noisyMember) op(c int) op {
	org := m.t.orgID.String()
	reads := []struct{ path, cookie string }{
		{"/admin/v1/orgs/" + org + "/deliveries?status=failed&limit=50", ""},
		{"/admin/v1/orgs/" + org + "/deliveries?endpoint_id=" + m.endpoint.String() + "&limit=50", ""},
		{"/console/", m.cookie},
	}
	i := c
	return func(ctx context.Context) error {
		r := reads[i%len(reads)]
		i++
		a, err := m.get(ctx, r.path, r.cookie)
		switch {
		case err != nil:
			return err
		case a.status == http.StatusTooManyRequests:
			m.paced.Add(1)
			return nil
		case a.status != http.StatusOK:
			return fmt.Errorf("GET %s: %d %s", r.path, a.status, truncate(a.body, 200))
		}
		return nil
	}
}
