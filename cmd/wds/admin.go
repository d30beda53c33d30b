package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/platform/answer"
	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
)

func init() { commands["admin"] = adminCmd }

// adminEnv is what an admin command runs against.
type adminEnv struct {
	cfg *config.Config
	db  *gorm.DB
	log logrus.FieldLogger
	// devDB is set when the command works on the wds dev database (DATABASE_URL unset).
	devDB bool
	// The domain services the commands call, each through the interface its command file declares.
	// The database commands have no Temporal client: the worker's relay starts the events their
	// writes commit, and the resends and re-fires they queue are announced to the workers, which
	// start them at once (newServices).
	workspace       workspaceOps      // workspace.Service
	readKeys        readKeyOps        // apikeys.Service
	integrationKeys integrationKeyOps // apikeys.Service, without the encryption key
	catalog         catalogOps        // catalog.Service
	orders          orderOps          // ingest.Service
	shipping        shippingOps       // fulfillment.Service
	deliveries      deliveryLogOps    // deliverylog.Service
	events          eventOps          // eventsearch.Service
	resends         resendOps         // resend.Service
	// versions is set instead of the database for the version commands, which run on Temporal.
	versions versionOps // versions.Deployments
}

// newAdminEnv wires the services over db, without the encryption key.
func newAdminEnv(cfg *config.Config, db *gorm.DB, log logrus.FieldLogger) *adminEnv {
	svc := newServices(cfg, db, nil, nil, log)
	return &adminEnv{cfg: cfg, db: db, log: log, devDB: cfg.DatabaseURL == "",
		workspace: svc.people, readKeys: svc.keys, integrationKeys: svc.keys,
		catalog: svc.catalog, orders: svc.orders, shipping: svc.shipping, deliveries: svc.deliveries, events: svc.events, resends: svc.resends}
}

// services builds the services as the command's settings now are, with the encryption key open
// when the command seals secrets (only those open it: the others run without it).
func (e *adminEnv) services(seals bool) (*services, error) {
	var box *secrets.Box
	if seals {
		var err error
		if box, err = encryptionBox(e.cfg); err != nil {
			return nil, err
		}
	}
	return newServices(e.cfg, e.db, box, nil, e.log), nil
}

// sealingKeys is the key operations with the encryption key open, to mint an integration key.
func (e *adminEnv) sealingKeys() (integrationKeyOps, error) {
	svc, err := e.services(true)
	if err != nil {
		return nil, err
	}
	return svc.keys, nil
}

// adminCommand parses its flags from fs (already parsed) and returns the one JSON object to print.
type adminCommand struct {
	summary string // one line for `wds admin help`
	flags   func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error)
	// temporal marks a command that runs on Temporal instead of the database (runOnTemporal).
	temporal bool
}

// adminCommands maps "noun verb" to a command; files register theirs in init.
var adminCommands = map[string]adminCommand{}

func registerAdmin(name, summary string, flags func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error)) {
	adminCommands[name] = adminCommand{summary: summary, flags: flags}
}

// registerTemporalAdmin registers a command that runs on Temporal instead of the database.
func registerTemporalAdmin(name, summary string, flags func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error)) {
	adminCommands[name] = adminCommand{summary: summary, flags: flags, temporal: true}
}

// adminCmd prints exactly one JSON object on stdout, or {"error","detail"} on stderr and fails.
// `wds admin help` (or -h) lists the commands; `wds admin <noun> <verb> -h` prints one's flags.
func adminCmd(ctx context.Context, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		printAdminUsage(os.Stdout)
		return nil
	}
	out, err := runAdmin(ctx, args)
	if errors.Is(err, flag.ErrHelp) {
		printCommandUsage(os.Stdout, args[0]+" "+args[1])
		return nil
	}
	if err != nil {
		code, detail := answer.Code(err)
		_ = jsonEncoder(os.Stderr).Encode(map[string]string{"error": code, "detail": detail})
		printUsageOf(os.Stderr, err)
		return err
	}
	return jsonEncoder(os.Stdout).Encode(out)
}

// jsonEncoder writes JSON for people and scripts: "<" stays "<", not "\u003c".
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

func runAdmin(ctx context.Context, args []string) (any, error) {
	if len(args) < 2 || adminCommands[args[0]+" "+args[1]].flags == nil {
		return nil, unknownAdminCommand(args)
	}
	name := args[0] + " " + args[1]
	fs := newAdminFlags(name)
	run := adminCommands[name].flags(fs)
	if err := fs.Parse(args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		// A flag's own error (a bad value) names the flag; an unknown one also shows the command's usage.
		var usage func(io.Writer)
		if strings.HasPrefix(err.Error(), "flag provided but not defined") {
			usage = func(w io.Writer) { printCommandUsage(w, name) }
		}
		return nil, &usageError{err: problem.Fail(paging.ErrInvalidParameter, "%s", unknownFlag(fs, err)), usage: usage}
	}
	if fs.NArg() > 0 {
		return nil, problem.Fail(paging.ErrInvalidParameter, "unexpected argument %q", fs.Arg(0))
	}
	if err := missingRequired(fs); err != nil {
		return nil, err
	}
	cfg, err := config.Load()
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "%v", err)
	}
	log := cfg.Logger()
	log.SetOutput(os.Stderr)
	if adminCommands[name].temporal {
		return runOnTemporal(ctx, cfg, log, run)
	}
	url, err := databaseURL(cfg)
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "%v", err)
	}
	db, err := database.Open(ctx, url, log)
	if err != nil {
		return nil, err
	}
	defer database.Close(db)
	return run(ctx, newAdminEnv(cfg, db, log))
}

// Flag helpers: each parses a required or optional value and reports the flag by name.

// requiredUUID is a flag holding a UUID that must be given; a malformed value fails at parse time
// naming the flag, and runAdmin reports any left unset.
type requiredUUID struct {
	id  uuid.UUID
	set bool
}

func (r *requiredUUID) String() string { return r.id.String() }

func (r *requiredUUID) Set(v string) error {
	id, err := uuid.Parse(v)
	if err != nil {
		return errors.New("must be a UUID")
	}
	r.id, r.set = id, true
	return nil
}

// uuidFlag defines a required UUID flag.
func uuidFlag(fs *flag.FlagSet, name, usage string) *uuid.UUID {
	r := &requiredUUID{}
	fs.Var(r, name, usage+" (required)")
	return &r.id
}

// requiredString is a flag holding text that must be given and not be blank.
type requiredString struct {
	s   string
	set bool
}

func (r *requiredString) String() string { return r.s }

func (r *requiredString) Set(v string) error {
	r.s, r.set = v, strings.TrimSpace(v) != ""
	return nil
}

// stringFlag defines a required text flag.
func stringFlag(fs *flag.FlagSet, name, usage string) *string {
	r := &requiredString{}
	fs.Var(r, name, usage+" (required)")
	return &r.s
}

// required reports whether f must be given, and whether it was.
func required(f *flag.Flag) (must, given bool) {
	switch r := f.Value.(type) {
	case *requiredUUID:
		return true, r.set
	case *requiredString:
		return true, r.set
	case *requiredPercent:
		return true, r.set
	}
	return false, false
}

// missingRequired names the first required flag that was not given.
func missingRequired(fs *flag.FlagSet) error {
	var missing error
	fs.VisitAll(func(f *flag.Flag) {
		if must, given := required(f); must && !given && missing == nil {
			missing = problem.Fail(paging.ErrInvalidParameter, "--%s is required", f.Name)
		}
	})
	return missing
}

func optionalTime(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "--%s must be an RFC 3339 time such as %s", name, timeExample(name, time.Now()))
	}
	return &t, nil
}

// timeExample is a time to show beside a time flag that did not parse, one the flag would take:
// a month ahead for --expires-at, an hour back for the flags that look back (a --since in the future
// is itself refused).
func timeExample(name string, now time.Time) string {
	if name == "expires-at" {
		return now.UTC().AddDate(0, 1, 0).Truncate(24 * time.Hour).Format(time.RFC3339)
	}
	return now.UTC().Add(-time.Hour).Truncate(time.Hour).Format(time.RFC3339)
}
