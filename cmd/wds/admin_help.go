package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// newAdminFlags is a command's flag set: errors come back to the caller, nothing is printed.
func newAdminFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("wds admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// dashDash spells flags in the flag package's errors the way the docs do: --org, not -org.
func dashDash(msg string) string {
	return strings.NewReplacer("flag -", "flag --", "defined: -", "defined: --", "argument: -", "argument: --").Replace(msg)
}

// printAdminUsage lists every command with its flags, required ones bare and first, and what it does.
func printAdminUsage(w io.Writer) {
	fmt.Fprint(w, "usage: wds admin <noun> <verb> [flags]      (wds admin <noun> <verb> -h for one command)\n\n")
	names := make([]string, 0, len(adminCommands))
	for n := range adminCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %s\n      %s\n", commandLine(n), adminCommands[n].summary)
	}
	fmt.Fprint(w, `
Each command prints one JSON object on stdout and exits 0; a failure prints {"error","detail"} on
stderr and exits 1. Flags in brackets are optional; the others are required. Commands use DATABASE_URL (or the database wds dev records in WDS_DATA_DIR);
the version commands use TEMPORAL_ADDRESS (or the Temporal wds dev records there) instead.
`)
}

// printCommandUsage prints one command's synopsis and each flag's meaning.
func printCommandUsage(w io.Writer, name string) {
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\n", commandLine(name), upperFirst(adminCommands[name].summary))
	fs := newAdminFlags(name)
	adminCommands[name].flags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		_, meaning := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace("--"+f.Name+" "+flagKind(f)), meaning)
	})
}

// commandLine is "wds admin NOUN VERB" and its flags' synopsis.
func commandLine(name string) string {
	return strings.TrimSpace("wds admin " + name + " " + flagSynopsis(name))
}

// upperFirst capitalises a summary's first letter for a sentence of its own.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagSynopsis is "--name STRING --org UUID [--currency STRING]": required flags bare, optional ones
// in brackets, each group sorted by name.
func flagSynopsis(name string) string {
	fs := newAdminFlags(name)
	adminCommands[name].flags(fs)
	var req, opt []string
	fs.VisitAll(func(f *flag.Flag) {
		arg := "--" + f.Name
		if kind := flagKind(f); kind != "" {
			arg += " " + kind
		}
		if must, _ := required(f); must {
			req = append(req, arg)
			return
		}
		opt = append(opt, "["+arg+"]")
	})
	return strings.Join(append(req, opt...), " ")
}

// flagKind names a flag's value: UUID, STRING, INT...; empty for a switch.
func flagKind(f *flag.Flag) string {
	if _, ok := f.Value.(*requiredUUID); ok {
		return "UUID"
	}
	if _, ok := f.Value.(*requiredString); ok {
		return "STRING"
	}
	if _, ok := f.Value.(*requiredPercent); ok {
		return "PERCENT"
	}
	kind, _ := flag.UnquoteUsage(f)
	return strings.ToUpper(kind)
}
