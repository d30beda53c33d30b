package doctest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
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
