package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/catalog"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

// ShippingService ships orders and records their tracking and delivery (fulfillment.Service).
type ShippingService interface {
	ShipOrder(ctx context.Context, actor, orderID uuid.UUID, in fulfillment.Ship) (*order.Shipment, error)
	AddTracking(ctx context.Context, actor, shipmentID uuid.UUID, tracking string, carrier *string) (*order.Shipment, error)
	MarkDelivered(ctx context.Context, actor, shipmentID uuid.UUID, deliveredAt *time.Time) (*order.Shipment, error)
}

// VendorService is the vendor CRM's writes (catalog.Service).
type VendorService interface {
	CreateVendor(ctx context.Context, orgID, actorID, storeID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	UpdateVendor(ctx context.Context, actorID, vendorID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	IssueClaimToken(ctx context.Context, actorID, vendorID uuid.UUID) (*catalog.ClaimToken, error)
}

// ClientService is the operator's own writes of clients (ingest.Service).
type ClientService interface {
	CreateClient(ctx context.Context, orgID, actorID uuid.UUID, in ingest.NewClient) (*ingest.ClientView, error)
	UpdateClient(ctx context.Context, actorID, clientID uuid.UUID, in ingest.ClientFields) (*ingest.ClientView, error)
}

// The workspace pages: orders (ship, tracking, delivered), vendors (add, edit, claim token) and
// clients (add, edit), over the same operations as the Operator API.
func (c *Console) registerWorkspacePages(p *gin.RouterGroup) {
	p.GET("/orders", c.orders)
	p.GET("/orders/:id", c.order)
	p.POST("/orders/:id/ship", c.shipOrder)
	p.POST("/orders/:id/resend", c.resendOrder)
	p.POST("/shipments/:id/tracking", c.addTracking)
	p.POST("/shipments/:id/delivered", c.markDelivered)
	p.GET("/vendors", c.vendors)
	p.POST("/vendors", c.createVendor)
	p.POST("/vendors/:id", c.updateVendor)
	p.POST("/vendors/:id/claim-token", c.claimToken)
	p.GET("/clients", c.clients)
	p.POST("/clients", c.createClient)
	p.POST("/clients/:id", c.updateClient)
}

func (c *Console) scope(g *gin.Context) paging.ListQuery {
	return paging.ListQuery{Scope: paging.Scope{OrgID: sessionOf(g).OrgID}, Limit: 100}
}

func (c *Console) order(g *gin.Context) { c.orderPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) orderPage(g *gin.Context, code int, v view) {
	id, err := pathID(g)
	var o *order.Order
	if err == nil {
		o, err = order.Get(g.Request.Context(), c.DB, paging.Scope{OrgID: sessionOf(g).OrgID}, id)
	}
	data := map[string]any{"Order": o}
	if err == nil {
		err = orderDetails(g.Request.Context(), c.DB, paging.Scope{OrgID: sessionOf(g).OrgID}, o, data)
	}
	if err == nil {
		data["Targets"], err = c.resendTargets(g)
	}
	if err != nil {
		c.refuse(g, err)
		return
	}
	v.Data = data
	c.render(g, code, "order", sessionOf(g), v)
}

// orderDetails decodes what the order page shows beside the order: its lines with their totals,
// payments, shipments and client.
func orderDetails(ctx context.Context, db *gorm.DB, scope paging.Scope, o *order.Order, data map[string]any) error {
	var lines []order.Line
	if err := json.Unmarshal(o.Lines, &lines); err != nil {
		return fmt.Errorf("order lines: %w", err)
	}
	payments, err := o.PaymentList()
	if err != nil {
		return err
	}
	shipments, err := o.ShipmentList()
	if err != nil {
		return err
	}
	data["Lines"], data["Payments"], data["Shipments"] = lines, payments, shipments
	if o.ClientID != nil {
		// A client deleted since keeps its id on the order; the page says so rather than failing.
		client, err := ingest.GetClient(ctx, db, scope, *o.ClientID)
		if err != nil && !errors.Is(err, problem.NotFound) {
			return err
		}
		data["Client"] = client
	}
	return nil
}

// shipped sends the browser back to the order after a shipment operation, or shows the failure.
func (c *Console) shipped(g *gin.Context, orderID uuid.UUID, err error) {
	if err != nil {
		// A shipment's own form failed when the path names the shipment: that row keeps what was
		// typed, not the Ship form.
		v := view{Error: c.problem(err), Form: form(g)}
		if row := g.Param("id"); row != orderID.String() {
			v.editing = row
		}
		// The order page reads its id from the path; a shipment route's :id is the shipment's, and
		// gin's Param answers the first "id", so replace it rather than add one.
		g.Params = append(slices.DeleteFunc(g.Params, func(p gin.Param) bool { return p.Key == "id" }),
			gin.Param{Key: "id", Value: orderID.String()})
		c.orderPage(g, status(err), v)
		return
	}
	c.done(g, "/console/orders/"+orderID.String(), "shipment")
}

func (c *Console) shipOrder(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	in := fulfillment.Ship{Carrier: g.PostForm("carrier")}
	if t := strings.TrimSpace(g.PostForm("tracking_number")); t != "" {
		in.TrackingNumber = &t
	}
	_, err := c.Shipping.ShipOrder(g.Request.Context(), sessionOf(g).User.ID, id, in)
	c.shipped(g, id, err)
}

func (c *Console) addTracking(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	var carrier *string
	if v := strings.TrimSpace(g.PostForm("carrier")); v != "" {
		carrier = &v
	}
	_, err := c.Shipping.AddTracking(g.Request.Context(), sessionOf(g).User.ID, id, g.PostForm("tracking_number"), carrier)
	c.shipped(g, formOrder(g), err)
}

func (c *Console) markDelivered(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	_, err := c.Shipping.MarkDelivered(g.Request.Context(), sessionOf(g).User.ID, id, nil)
	c.shipped(g, formOrder(g), err)
}

func formOrder(g *gin.Context) uuid.UUID { id, _ := uuid.Parse(g.PostForm("order")); return id }

// vendors lists the vendor CRM with forms to add and edit vendors and issue claim tokens.
func (c *Console) vendors(g *gin.Context) { c.vendorsPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) vendorsPage(g *gin.Context, code int, v view) {
	ctx := g.Request.Context()
	page, err := catalog.ListVendors(ctx, c.DB, c.scope(g))
	if err != nil && v.Error == nil {
		v.Error = c.problem(err)
	}
	stores, _ := c.Members.Stores(ctx, sessionOf(g).OrgID)
	v.Data = map[string]any{"Vendors": page.Rows, "Stores": stores, "Token": v.Data}
	c.render(g, code, "vendors", sessionOf(g), v)
}

// vendorFields reads the vendor form: every field is sent, and an empty one clears it.
func vendorFields(g *gin.Context) catalog.VendorFields {
	field := func(name string) models.Optional[string] {
		v := strings.TrimSpace(g.PostForm(name))
		return models.Optional[string]{Set: true, Null: v == "", Value: v}
	}
	return catalog.VendorFields{Name: field("name"), Email: field("email"), Phone: field("phone"), Notes: field("notes")}
}

func (c *Console) createVendor(g *gin.Context) {
	s := sessionOf(g)
	store, _ := uuid.Parse(g.PostForm("store_id"))
	_, err := c.Vendors.CreateVendor(g.Request.Context(), s.OrgID, s.User.ID, store, vendorFields(g))
	c.back(g, "/console/vendors", err, c.vendorsPage)
}

func (c *Console) updateVendor(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	_, err := c.Vendors.UpdateVendor(g.Request.Context(), sessionOf(g).User.ID, id, vendorFields(g))
	c.backToRow(g, "/console/vendors", err, c.vendorsPage)
}

func (c *Console) claimToken(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	tok, err := c.Vendors.IssueClaimToken(g.Request.Context(), sessionOf(g).User.ID, id)
	if err != nil {
		c.vendorsPage(g, status(err), view{Error: c.problem(err)})
		return
	}
	c.vendorsPage(g, http.StatusOK, view{Data: tok})
}

// clients lists the CRM's clients with forms to add and edit them.
func (c *Console) clients(g *gin.Context) { c.clientsPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) clientsPage(g *gin.Context, code int, v view) {
	ctx := g.Request.Context()
	page, err := ingest.ListClients(ctx, c.DB, c.scope(g))
	if err != nil && v.Error == nil {
		v.Error = c.problem(err)
	}
	stores, _ := c.Members.Stores(ctx, sessionOf(g).OrgID)
	v.Data = map[string]any{"Clients": page.Rows, "Stores": stores, "Types": ingest.ClientTypes()}
	c.render(g, code, "clients", sessionOf(g), v)
}

// clientFields reads the client form: every field is sent, and an empty one clears it.
func clientFields(g *gin.Context) ingest.ClientFields {
	field := func(name string) models.Optional[string] {
		v := strings.TrimSpace(g.PostForm(name))
		return models.Optional[string]{Set: true, Null: v == "", Value: v}
	}
	tags := splitList(g.PostForm("tags"))
	return ingest.ClientFields{Email: field("email"), DisplayName: field("display_name"), FirstName: field("first_name"),
		LastName: field("last_name"), Phone: field("phone"), ClientType: field("client_type"),
		Tags: models.Optional[[]string]{Set: true, Null: len(tags) == 0, Value: tags}}
}

func (c *Console) createClient(g *gin.Context) {
	s := sessionOf(g)
	store := g.PostForm("store_id")
	_, err := c.Clients.CreateClient(g.Request.Context(), s.OrgID, s.User.ID, ingest.NewClient{StoreID: &store, ClientFields: clientFields(g)})
	c.back(g, "/console/clients", err, c.clientsPage)
}

func (c *Console) updateClient(g *gin.Context) {
	id, _ := uuid.Parse(g.Param("id"))
	_, err := c.Clients.UpdateClient(g.Request.Context(), sessionOf(g).User.ID, id, clientFields(g))
	c.backToRow(g, "/console/clients", err, c.clientsPage)
}

// back goes to url after a write, or shows page with the failure and the form as typed.
func (c *Console) back(g *gin.Context, url string, err error, page func(*gin.Context, int, view)) {
	if err != nil {
		page(g, status(err), view{Error: c.problem(err), Form: form(g)})
		return
	}
	c.done(g, url, "saved")
}

// backToRow is back for a grid row's edit form: the failure keeps what was typed in that row.
func (c *Console) backToRow(g *gin.Context, url string, err error, page func(*gin.Context, int, view)) {
	if err != nil {
		page(g, status(err), view{Error: c.problem(err), Form: form(g), editing: g.Param("id")})
		return
	}
	c.done(g, url, "saved")
}
