package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/catalog"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/models"
)

// VendorStore is the supplier CRM's writes and the vendor claim (catalog).
type VendorStore interface {
	CreateVendor(ctx context.Context, orgID, actorID, storeID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	UpdateVendor(ctx context.Context, actorID, vendorID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	IssueClaimToken(ctx context.Context, actorID, vendorID uuid.UUID) (*catalog.ClaimToken, error)
	ClaimVendor(ctx context.Context, in catalog.Claim) (*catalog.Claimed, error)
}

// registerVendors mounts the supplier CRM's writes (docs/cli.md, Workspace operations): add and edit a vendor and issue
// a claim token on the Operator API, and the public claim, whose token is its credential. The rules,
// roles included, live in catalog.
func (s *server) registerVendors(r *gin.Engine) {
	g := s.operatorGroup(r)
	g.POST("/orgs/:org_id/vendors", pathOrg, s.createVendor)
	g.PATCH("/vendors/:id", s.updateVendor)
	g.POST("/vendors/:id/claim-token", s.issueClaimToken)
	r.POST("/v1/vendor-claims", s.claimVendor)
}

// newVendorBody is POST /admin/v1/orgs/{org_id}/vendors.
type newVendorBody struct {
	StoreID *string                 `json:"store_id"`
	Name    models.Optional[string] `json:"name"`
	Email   models.Optional[string] `json:"email"`
	Phone   models.Optional[string] `json:"phone"`
	Notes   models.Optional[string] `json:"notes"`
}

func (s *server) createVendor(c *gin.Context) {
	var b newVendorBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	store, err := paramUUID("store_id", b.StoreID)
	if err != nil {
		fail(c, err)
		return
	}
	v, err := s.Vendors.CreateVendor(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), actorOf(c), store,
		catalog.VendorFields{Name: b.Name, Email: b.Email, Phone: b.Phone, Notes: b.Notes})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

func (s *server) updateVendor(c *gin.Context) {
	id, ok := pathID(c, "vendor")
	if !ok {
		return
	}
	var in catalog.VendorFields
	if err := readObject(c, &in); err != nil {
		fail(c, err)
		return
	}
	v, err := s.Vendors.UpdateVendor(c.Request.Context(), actorOf(c), id, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *server) issueClaimToken(c *gin.Context) {
	id, ok := pathID(c, "vendor")
	if !ok {
		return
	}
	t, err := s.Vendors.IssueClaimToken(c.Request.Context(), actorOf(c), id)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, t)
}

// claimsPerMinute is how many claims one client address may attempt a minute: enough for a person
// who mistypes, far too few to guess a token's 256 bits.
const claimsPerMinute = 10

// claimVendor is POST /v1/vendor-claims: no key, the token is the credential, so attempts are
// counted per client address (X-Forwarded-For only from WDS_TRUSTED_PROXIES) before anything else.
func (s *server) claimVendor(c *gin.Context) {
	if !s.limiter.Allow("claim:"+c.ClientIP(), claimsPerMinute) {
		fail(c, problem.Fail(ratelimit.ErrExceeded, "at most %d claim attempts a minute from one address; retry after 60 seconds", claimsPerMinute))
		return
	}
	var in catalog.Claim
	if err := readObject(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := s.Vendors.ClaimVendor(c.Request.Context(), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
