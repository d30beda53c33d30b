package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"

	"wds/internal/ingest"
	"wds/internal/platform/answer"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

func init() {
	registerAdmin("order create", "record an order by hand from a JSON file (the Operator API's body)", orderCreate)
	registerAdmin("client create", "add a client to a store", clientCreate)
	registerAdmin("client update", "change a client's fields", clientUpdate)
}

// orderOps is what the order and client commands call (ingest.Service).
type orderOps interface {
	CreateAppOrder(ctx context.Context, orgID, actorID uuid.UUID, in ingest.AppOrder) (*ingest.OrderResult, error)
	CreateClient(ctx context.Context, orgID, actorID uuid.UUID, in ingest.NewClient) (*ingest.ClientView, error)
	UpdateClient(ctx context.Context, actorID, clientID uuid.UUID, in ingest.ClientFields) (*ingest.ClientView, error)
}

// maxBodyFile caps an order file like the API caps a request body.
const maxBodyFile = 1 << 20

// orderCreate is `wds admin order create --org --store --actor --file order.json|-`: the body of
// POST /admin/v1/orgs/{org_id}/orders without store_id, which --store gives. Prints the envelope.
func orderCreate(fs *flag.FlagSet) runFunc {
	org, store, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "store", "store id"), uuidFlag(fs, "actor", "acting user id")
	file := stringFlag(fs, "file", "order JSON file, or - for stdin")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		raw, err := readBodyFile(*file)
		if err != nil {
			return nil, err
		}
		var in ingest.AppOrder
		if err := ingest.Decode(raw, &in); err != nil {
			return nil, err
		}
		s := store.String()
		in.StoreID = &s
		return env.orders.CreateAppOrder(ctx, *org, *actor, in)
	}
}

func readBodyFile(name string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, problem.Fail(paging.ErrInvalidParameter, "--file: %v", err)
		}
		defer f.Close()
		r = f
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxBodyFile+1))
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "--file: %v", err)
	}
	if len(raw) > maxBodyFile {
		return nil, problem.Fail(answer.ErrPayloadTooLarge, "--file exceeds 1 MiB")
	}
	return raw, nil
}

// clientFlags defines the client field flags create and update share; fields turns the flags the
// command line named into fields, an empty value meaning null (update clears the field with it).
func clientFlags(fs *flag.FlagSet) (fields func() ingest.ClientFields) {
	text := map[string]*string{}
	for _, name := range []string{"email", "display-name", "first-name", "last-name", "phone", "client-type"} {
		text[name] = fs.String(name, "", strings.ReplaceAll(name, "-", " "))
	}
	tags := fs.String("tags", "", "comma-separated tags")
	return func() ingest.ClientFields {
		var f ingest.ClientFields
		dst := map[string]*models.Optional[string]{"email": &f.Email, "display-name": &f.DisplayName,
			"first-name": &f.FirstName, "last-name": &f.LastName, "phone": &f.Phone, "client-type": &f.ClientType}
		fs.Visit(func(fl *flag.Flag) {
			if d, ok := dst[fl.Name]; ok {
				*d = models.Optional[string]{Set: true, Null: *text[fl.Name] == "", Value: *text[fl.Name]}
			}
			if fl.Name == "tags" {
				f.Tags = models.Optional[[]string]{Set: true, Null: *tags == "", Value: splitTags(*tags)}
			}
		})
		return f
	}
}

func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, ",")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// clientCreate is `wds admin client create --org --store --actor [field flags]`; prints the client.
func clientCreate(fs *flag.FlagSet) runFunc {
	org, store, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "store", "store id"), uuidFlag(fs, "actor", "acting user id")
	fields := clientFlags(fs)
	return func(ctx context.Context, env *adminEnv) (any, error) {
		s := store.String()
		return env.orders.CreateClient(ctx, *org, *actor, ingest.NewClient{StoreID: &s, ClientFields: fields()})
	}
}

// clientUpdate is `wds admin client update --id --actor [field flags]`: only the flags given change,
// an empty value clears; prints the client.
func clientUpdate(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "client id"), uuidFlag(fs, "actor", "acting user id")
	fields := clientFlags(fs)
	return func(ctx context.Context, env *adminEnv) (any, error) {
		return env.orders.UpdateClient(ctx, *actor, *id, fields())
	}
}
