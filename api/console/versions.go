package console

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"wds/internal/versions"
)

// WorkerVersions reads the versions of wds's Temporal Worker Deployment and the delivery chains each
// still holds (versions.Deployments).
type WorkerVersions interface {
	List(ctx context.Context) (versions.Deployment, error)
}

// versionsWait bounds the overview's wait for Temporal: an unreachable one must not hold the page.
const versionsWait = 3 * time.Second

// workerVersions adds the deployment's versions to the overview of an owner or admin, who decide
// when a deploy's previous workers may stop (docs/production.md, Deploys and rollbacks). A Temporal
// that cannot answer leaves the rest of the page as it is and says so in place of the table.
func (c *Console) workerVersions(g *gin.Context, data map[string]any) {
	if c.Versions == nil || !sessionOf(g).Manager() {
		return
	}
	ctx, cancel := context.WithTimeout(g.Request.Context(), versionsWait)
	defer cancel()
	d, err := c.Versions.List(ctx)
	if err != nil {
		c.Log.WithError(err).Warn("console overview: cannot read the worker versions from Temporal")
		data["VersionsUnreadable"] = true
		return
	}
	data["Versions"] = d
}
