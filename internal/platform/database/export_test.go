package database

import "gorm.io/gorm"

// Waiting is how many callers of db wait for a transaction slot.
func Waiting(db *gorm.DB) int { return int(db.ConnPool.(*gatedPool).waiting.Load()) }
