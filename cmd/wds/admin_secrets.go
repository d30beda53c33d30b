package main

import (
	"context"
	"flag"

	"wds/internal/delivery"
	"wds/internal/platform/secrets/reencrypt"
)

func init() {
	// wds admin secrets reencrypt: the last step of rotating WDS_ENCRYPTION_KEY (docs/production.md).
	// It acts on the whole database rather than an org, so it takes no --actor; it changes no secret,
	// only the key it is sealed under.
	registerAdmin("secrets reencrypt", "seal every secret again under the current key", func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error) {
		return func(ctx context.Context, env *adminEnv) (any, error) {
			box, err := encryptionBox(env.cfg)
			if err != nil {
				return nil, err
			}
			results, err := reencrypt.Run(ctx, env.db, box)
			if err != nil {
				return nil, err
			}
			return map[string]any{"columns": results}, nil
		}
	})
}

func init() {
	// wds admin secrets redact: once, after upgrading from a release that stored receivers' answers
	// unredacted (docs/production.md). Like reencrypt, it acts on the whole database.
	registerAdmin("secrets redact", "redact sealed values from receivers' answers stored before redaction", func(fs *flag.FlagSet) func(ctx context.Context, env *adminEnv) (any, error) {
		return func(ctx context.Context, env *adminEnv) (any, error) {
			box, err := encryptionBox(env.cfg)
			if err != nil {
				return nil, err
			}
			return delivery.RedactStored(ctx, env.db, box, 500)
		}
	})
}
