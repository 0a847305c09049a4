package web

import "github.com/google/uuid"

func init() {
	limitScope = func() string { return uuid.NewString() + ":" }
}
