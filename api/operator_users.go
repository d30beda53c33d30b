package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/platform/problem"
	"wds/internal/workspace"
)

// TokenStore rotates and revokes operator tokens (workspace).
type TokenStore interface {
	RotateToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RotatedToken, error)
	RevokeToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RevokedToken, error)
}

// registerOperatorUsers mounts the operator token's rotation and revocation. The rules, roles
// included, live in workspace: anyone may change their own token, owners and admins anyone's of
// their org; a user of another org is 404.
func (s *server) registerOperatorUsers(r *gin.Engine) {
	g := s.operatorGroup(r)
	g.POST("/users/:id/rotate-token", userTokenOp(s, TokenStore.RotateToken))
	g.POST("/users/:id/revoke-token", userTokenOp(s, TokenStore.RevokeToken))
}

// userTokenOp answers 200 with what op returns for the path's user; the request has no body.
func userTokenOp[T any](s *server, op func(TokenStore, context.Context, uuid.UUID, uuid.UUID) (T, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			fail(c, problem.Fail(problem.NotFound, "user %q not found", c.Param("id")))
			return
		}
		out, err := op(s.Tokens, c.Request.Context(), id, actorOf(c))
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}
