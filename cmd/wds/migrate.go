package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"wds/config"
	"wds/database"
	"wds/migrations"
)

func init() { commands["migrate"] = migrateCmd }

// migrateCmd runs `wds migrate up|status` and prints the result as JSON.
func migrateCmd(ctx context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "up" && args[0] != "status") {
		return errors.New("usage: wds migrate up|status")
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	url, err := databaseURL(cfg)
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, url, cfg.Logger())
	if err != nil {
		return err
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	var out any
	if args[0] == "up" {
		n, err := migrations.Up(ctx, sqlDB)
		if err != nil {
			return err
		}
		out = map[string]any{"applied": n}
	} else {
		list, err := migrations.List(ctx, sqlDB)
		if err != nil {
			return err
		}
		out = map[string]any{"migrations": list}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
