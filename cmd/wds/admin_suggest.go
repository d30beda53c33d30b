package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// usageError is a mistake in the command line: the error in the usual shape, and the usage that
// helps fix it, printed after the error.
type usageError struct {
	err   error
	usage func(w io.Writer)
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// printUsageOf prints the usage err carries, if it carries one.
func printUsageOf(w io.Writer, err error) {
	var u *usageError
	if errors.As(err, &u) && u.usage != nil {
		fmt.Fprintln(w)
		u.usage(w)
	}
}

// distance is the Levenshtein edit distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// nearest is the candidate closest to s, and how far it is; a candidate that s begins (claim:
// claim-token, event: events) is nearest of all; ties go to the first in sorted order.
func nearest(s string, candidates []string) (best string, dist int) {
	dist = -1
	for _, c := range candidates {
		d := distance(s, c)
		if s != "" && strings.HasPrefix(c, s) {
			d = 0
		}
		if dist < 0 || d < dist {
			best, dist = c, d
		}
	}
	return best, dist
}

// closeEnough is how far a typo may be from what was meant: two edits, or a third of a long word.
func closeEnough(s string, dist int) bool { return dist >= 0 && dist <= max(2, len(s)/3) }

// adminNouns maps each noun to its verbs, sorted.
func adminNouns() map[string][]string {
	nouns := map[string][]string{}
	for name := range adminCommands {
		noun, verb, _ := strings.Cut(name, " ")
		nouns[noun] = append(nouns[noun], verb)
	}
	for _, verbs := range nouns {
		sort.Strings(verbs)
	}
	return nouns
}

// nounsWithVerb lists the nouns, sorted, that have the verb.
func nounsWithVerb(nouns map[string][]string, verb string) []string {
	var out []string
	for n, verbs := range nouns {
		if slices.Contains(verbs, verb) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// unknownAdminCommand answers a command line that names no command: the nearest commands, and the
// usage of the nouns they belong to (or the list of nouns) rather than every command.
func unknownAdminCommand(args []string) error {
	noun, verb := args[0], ""
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") { // a flag is not the verb
		verb = args[1]
	}
	given := strings.TrimSpace(noun + " " + verb)
	nouns := adminNouns()
	var names []string
	for n := range nouns {
		names = append(names, n)
	}
	sort.Strings(names)

	// The nouns the person may have meant: the one given, the verb and noun swapped, the nouns that
	// contain the word (key: read-key, integration-key), or the nearest by edit distance.
	var candidates []string
	switch {
	case nouns[noun] != nil:
		candidates = []string{noun}
	case adminCommands[verb+" "+noun].flags != nil:
		candidates, noun, verb = []string{verb}, verb, noun
	case verb == "" && len(nounsWithVerb(nouns, noun)) > 0: // the verb alone: resend for event resend
		candidates, verb = nounsWithVerb(nouns, noun), noun
	default:
		for _, n := range names {
			if len(noun) >= 3 && strings.Contains(n, noun) {
				candidates = append(candidates, n)
			}
		}
		if len(candidates) == 0 {
			if n, d := nearest(noun, names); closeEnough(noun, d) {
				candidates = []string{n}
			}
		}
	}
	var suggestions []string
	for _, n := range candidates {
		verbs := nouns[n]
		switch {
		case adminCommands[n+" "+verb].flags != nil:
			suggestions = append(suggestions, n+" "+verb)
		case verb == "" && len(verbs) == 1, verb != "":
			v, _ := nearest(verb, verbs)
			suggestions = append(suggestions, n+" "+v)
		}
	}
	detail := fmt.Sprintf("unknown command %q", given)
	if verb == "" && nouns[noun] != nil {
		detail = fmt.Sprintf("%q needs a verb", noun)
	}
	if len(suggestions) > 0 {
		detail += "; did you mean: wds admin " + strings.Join(suggestions, " or wds admin ") + "?"
	}
	detail += " (`wds admin help` lists them all)"
	return &usageError{err: problem.Fail(paging.ErrInvalidParameter, "%s", detail), usage: func(w io.Writer) {
		fmt.Fprint(w, "usage: wds admin <noun> <verb> [flags]      (wds admin <noun> <verb> -h for one command)\n\n")
		if len(candidates) == 0 {
			fmt.Fprintf(w, "  nouns: %s\n", strings.Join(names, ", "))
			return
		}
		for _, n := range candidates {
			for _, v := range nouns[n] {
				fmt.Fprintf(w, "  %s\n", commandLine(n+" "+v))
			}
		}
	}}
}

// unknownFlag adds the nearest flag of fs to the flag package's "flag provided but not defined".
func unknownFlag(fs *flag.FlagSet, err error) string {
	msg := dashDash(err.Error())
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return msg
	}
	name = strings.TrimPrefix(name, "-")
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	best, d := nearest(name, flags)
	if closeEnough(name, d) {
		msg += "; did you mean --" + best + "?"
	}
	return msg
}
