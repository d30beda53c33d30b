package api

import (
	"github.com/gin-gonic/gin"

	"wds/internal/platform/answer"
)

// NotFound answers a path no route serves, in the APIs' error shape. The router's NoRoute; the
// console, which answers its own paths with an HTML page, hands it every other path.
func NotFound(c *gin.Context) { fail(c, answer.ErrNoSuchPath) }
