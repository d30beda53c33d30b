package main

import (
	"context"
	"flag"

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
