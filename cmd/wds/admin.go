package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/config"
	"wds/database"
	"wds/models"
	"wds/secrets"
)

func init() { commands["admin"] = adminCmd }

// adminEnv is what an admin command runs against.
type adminEnv struct {
	cfg *config.Config
	db  *gorm.DB
	log logrus.FieldLogger
}

// box opens the encryption key only for commands that seal secrets.
func (e *adminEnv) box() (*secrets.Box, error) { return encryptionBox(e.cfg) }

// adminCommand parses its flags from fs (already parsed) and returns the one JSON object to print.
type adminCommand struct {
	flags func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error)
}

// adminCommands maps "noun verb" to a command; files register theirs in init.
var adminCommands = map[string]adminCommand{}

func registerAdmin(name string, flags func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error)) {
	adminCommands[name] = adminCommand{flags: flags}
}

// adminCmd prints exactly one JSON object on stdout, or {"error","detail"} on stderr and fails.
func adminCmd(ctx context.Context, args []string) error {
	out, err := runAdmin(ctx, args)
	if err != nil {
		code, detail := api.ErrorCode(err)
		_ = json.NewEncoder(os.Stderr).Encode(map[string]string{"error": code, "detail": detail})
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func runAdmin(ctx context.Context, args []string) (any, error) {
	if len(args) < 2 || adminCommands[args[0]+" "+args[1]].flags == nil {
		return nil, models.Fail(models.ErrInvalidParameter, "usage: wds admin <noun> <verb> [flags]; commands: %s", adminNames())
	}
	fs := flag.NewFlagSet("wds admin "+args[0]+" "+args[1], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := adminCommands[args[0]+" "+args[1]].flags(fs)
	if err := fs.Parse(args[2:]); err != nil {
		return nil, models.Fail(models.ErrInvalidParameter, "%v", err)
	}
	if fs.NArg() > 0 {
		return nil, models.Fail(models.ErrInvalidParameter, "unexpected argument %q", fs.Arg(0))
	}
	if err := missingRequired(fs); err != nil {
		return nil, err
	}
	cfg, err := config.Load()
	if err != nil {
		return nil, models.Fail(models.ErrInvalidParameter, "%v", err)
	}
	log := cfg.Logger()
	log.SetOutput(os.Stderr)
	url, err := databaseURL(cfg)
	if err != nil {
		return nil, models.Fail(models.ErrInvalidParameter, "%v", err)
	}
	db, err := database.Open(ctx, url, log)
	if err != nil {
		return nil, err
	}
	defer database.Close(db)
	return run(ctx, &adminEnv{cfg: cfg, db: db, log: log})
}

func adminNames() string {
	names := make([]string, 0, len(adminCommands))
	for n := range adminCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
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

// missingRequired names the first required flag that was not given.
func missingRequired(fs *flag.FlagSet) error {
	var missing error
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(*requiredUUID); ok && !r.set && missing == nil {
			missing = models.Fail(models.ErrInvalidParameter, "--%s is required", f.Name)
		}
	})
	return missing
}

func requireString(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return models.Fail(models.ErrInvalidParameter, "--%s is required", name)
	}
	return nil
}

func optionalTime(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, models.Fail(models.ErrInvalidParameter, "--%s must be an RFC 3339 time such as 2027-01-01T00:00:00Z", name)
	}
	return &t, nil
}
