package main

import (
	"context"
	"flag"

	"wds/internal/catalog"
	"wds/models"
)

func init() {
	registerAdmin("vendor create", "add a vendor to an org", vendorCreate)
	registerAdmin("vendor update", "change a vendor's fields", vendorUpdate)
	registerAdmin("vendor claim-token", "mint the single-use token a supplier claims its vendor profile with; shown once", vendorClaimToken)
}

// vendorFlags defines the vendor field flags create and update share; fields turns the flags the
// command line named into fields, an empty value meaning null (update clears the field with it).
func vendorFlags(fs *flag.FlagSet) (fields func() catalog.VendorFields) {
	var f catalog.VendorFields
	dst := map[string]*models.Optional[string]{"name": &f.Name, "email": &f.Email, "phone": &f.Phone, "notes": &f.Notes}
	values := map[string]*string{}
	for _, name := range []string{"name", "email", "phone", "notes"} {
		values[name] = fs.String(name, "", "vendor "+name)
	}
	return func() catalog.VendorFields {
		fs.Visit(func(fl *flag.Flag) {
			if d, ok := dst[fl.Name]; ok {
				*d = models.Optional[string]{Set: true, Null: *values[fl.Name] == "", Value: *values[fl.Name]}
			}
		})
		return f
	}
}

// vendorCreate is `wds admin vendor create --org --store --actor --name [--email] [--phone] [--notes]`;
// it prints the vendor (its id among its fields) and emits vendor.created.
func vendorCreate(fs *flag.FlagSet) runFunc {
	org, store, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "store", "store id"), uuidFlag(fs, "actor", "acting user id")
	fields := vendorFlags(fs)
	return func(ctx context.Context, env *adminEnv) (any, error) {
		v, err := env.catalog.CreateVendor(ctx, *org, *actor, *store, fields())
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// vendorUpdate is `wds admin vendor update --id --actor [--name] [--email] [--phone] [--notes]`: only
// the flags given change; an empty value clears an optional field.
func vendorUpdate(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "vendor id"), uuidFlag(fs, "actor", "acting user id")
	fields := vendorFlags(fs)
	return func(ctx context.Context, env *adminEnv) (any, error) {
		v, err := env.catalog.UpdateVendor(ctx, *actor, *id, fields())
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// vendorClaimToken is `wds admin vendor claim-token --id --actor`: a single-use token (owners and
// admins) the supplier claims its profile with; shown once.
func vendorClaimToken(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "vendor id"), uuidFlag(fs, "actor", "acting user id (owner or admin)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		return env.catalog.IssueClaimToken(ctx, *actor, *id)
	}
}
