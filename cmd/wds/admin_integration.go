package main

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/models"
)

func init() {
	registerAdmin("integration-key create", "mint a pck_int_ key for the Integration API; prints it once", integrationKeyCreate)
	registerAdmin("integration-key revoke", "revoke an integration key", integrationKeyRevoke)
}

// integrationKeyOut shows the key, and the signing secret when there is one, exactly once.
type integrationKeyOut struct {
	ID            string `json:"id"`
	Key           string `json:"key"`
	SigningSecret string `json:"signing_secret,omitempty"`
}

// integrationKeyOps is what the integration-key commands call (apikeys.Service).
type integrationKeyOps interface {
	CreateIntegrationKey(ctx context.Context, in apikeys.NewIntegrationKey) (*apikeys.CreatedIntegrationKey, error)
	RevokeIntegrationKey(ctx context.Context, id, actorID uuid.UUID) (*models.IntegrationKey, error)
}

func integrationKeyCreate(fs *flag.FlagSet) runFunc {
	org, store, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "store", "store id the key is pinned to"), uuidFlag(fs, "actor", "acting user id")
	scopes := stringFlag(fs, "scopes", "comma-separated: orders:write,orders:cancel,payments:write,payments:refund,clients:write")
	format := fs.String("format", "generic", "payload format: generic or nativestore")
	requireSig := fs.Bool("require-signature", false, "require signed requests (always on for nativestore)")
	allow := fs.String("ip-allowlist", "", "comma-separated CIDR ranges (IPv4 or IPv6)")
	expires := fs.String("expires-at", "", "RFC 3339 expiry")
	rate := fs.Int("rate-limit", apikeys.DefaultRateLimit, "requests per minute, 1 to 6000")
	label := fs.String("label", "", "shown as the source of imported orders and clients")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		in := apikeys.NewIntegrationKey{OrgID: *org, StoreID: *store, ActorID: *actor, PayloadFormat: *format,
			RequireSignature: *requireSig, RateLimit: *rate, Label: *label, Scopes: splitList(*scopes), IPAllowlist: splitList(*allow)}
		var err error
		if in.ExpiresAt, err = optionalTime("expires-at", *expires); err != nil {
			return nil, err
		}
		keys, err := env.sealingKeys()
		if err != nil {
			return nil, err
		}
		k, err := keys.CreateIntegrationKey(ctx, in)
		if err != nil {
			return nil, err
		}
		return integrationKeyOut{ID: k.Key.ID.String(), Key: k.Plaintext, SigningSecret: k.SigningSecret}, nil
	}
}

func integrationKeyRevoke(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "key id"), uuidFlag(fs, "actor", "acting user id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		k, err := env.integrationKeys.RevokeIntegrationKey(ctx, *id, *actor)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID.String(), "revoked_at": k.RevokedAt.UTC().Format(time.RFC3339Nano)}, nil
	}
}

// splitList reads a comma-separated flag value; empty items are dropped.
func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
