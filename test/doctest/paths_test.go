package doctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoPath is a file or folder of this repository as the pages name it in code spans: under one of
// the top-level folders, e.g. `internal/ingest/create.go` or `workflows/testdata`.
var repoPath = regexp.MustCompile("`((?:api|cmd|internal|workflows|activities|worker|models|test|webhook|migrations|deploy|tools)/[\\w./-]*[\\w])`")

// The pages name files and folders to read (the architecture's walk of one order names every file
// it crosses): each one named must exist, so a move or a rename that leaves a page behind fails.
func TestThePagesNameFilesThatExist(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append(pages, filepath.Join(root, "README.md")) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range repoPath.FindAllStringSubmatch(string(text), -1) {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s names %s, which does not exist", rel, m[1])
			}
		}
	}
}

// link is a Markdown link to a page of the repository, with its anchor: [text](page.md#anchor).
var link = regexp.MustCompile(`\]\(([\w./-]*\.md)?(#[\w-]+)?\)`)

// docRef is a comment or page that points at a document outside the repository (the team's
// decision log) instead of the page that states the rule.
var docRef = regexp.MustCompile(`decisions(\.md)? ?§|§\d`)

// Links between the pages, and the docs/ pages code comments point to, lead somewhere: the page
// exists and, with an anchor, has a heading of that slug (as GitHub makes them). Nothing cites the
// decision log, which a clone does not hold.
func TestLinksLeadToHeadingsThatExist(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	slugs := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if s, ok := slugs[page]; ok {
			return s
		}
		s := map[string]bool{}
		if text, err := os.ReadFile(page); err == nil {
			for _, h := range heading.FindAllStringSubmatch(string(text), -1) {
				s[slug(h[1])] = true
			}
		} else {
			s = nil
		}
		slugs[page] = s
		return s
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, page := range append(pages, filepath.Join(root, "README.md")) {
		text, _ := os.ReadFile(page)
		rel, _ := filepath.Rel(root, page)
		if m := docRef.FindString(string(text)); m != "" {
			t.Errorf("%s cites the decision log (%q): link the page that states the rule", rel, m)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := page
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(page), m[1])
			}
			anchors := anchorsOf(target)
			switch {
			case anchors == nil:
				t.Errorf("%s links %s, which does not exist", rel, m[1])
			case m[2] != "" && !anchors[m[2][1:]]:
				t.Errorf("%s links %s%s: no such heading", rel, m[1], m[2])
			}
		}
	}
	for _, ref := range codeDocLinks(t, root) {
		if anchors := anchorsOf(filepath.Join(root, ref.page)); anchors == nil || (ref.anchor != "" && !anchors[ref.anchor]) {
			t.Errorf("%s points at %s#%s: no such page or heading", ref.file, ref.page, ref.anchor)
		}
	}
}

var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// slug is GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.NewReplacer("`", "", "*", "").Replace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

type docLink struct{ file, page, anchor string }

// codeDocLink is a Go comment's pointer at a page: docs/, the page, .md and perhaps #anchor.
var codeDocLink = regexp.MustCompile(`(docs/[\w/-]+\.md)(?:#([\w-]+))?`)

// codeDocLinks are the docs/ pages (and anchors) the Go files' comments point to; a file citing the
// decision log fails the test.
func codeDocLinks(t *testing.T, root string) []docLink {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var refs []docLink
	for _, f := range strings.Fields(string(out)) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if m := docRef.FindString(string(text)); m != "" {
			t.Errorf("%s cites the decision log (%q): link the page that states the rule", f, m)
		}
		for _, m := range codeDocLink.FindAllStringSubmatch(string(text), -1) {
			refs = append(refs, docLink{file: f, page: m[1], anchor: m[2]})
		}
	}
	return refs
}

func TestSlugIsGitHubs(t *testing.T) {
	for h, want := range map[string]string{
		"3. Watch it in the Temporal UI":               "3-watch-it-in-the-temporal-ui",
		`1. "We never got the webhook for order 1042"`: "1-we-never-got-the-webhook-for-order-1042",
		"Go: the `wds/webhook` package":                "go-the-wdswebhook-package",
		"The noisy-neighbour line: where org B stands": "the-noisy-neighbour-line-where-org-b-stands",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
