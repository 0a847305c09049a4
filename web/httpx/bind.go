package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
)

// MaxBody is the largest JSON body the API reads.
const MaxBody = 64 << 10

// BindJSON decodes the request body into dst and names the field that was
// wrong, so a bad body is a clear 400 and never a 500.
func BindJSON(c echo.Context, dst any) error {
	body := io.LimitReader(c.Request().Body, MaxBody+1)
	raw, err := io.ReadAll(body)
	if err != nil {
		return apperr.Invalidf("body", "The request body could not be read.")
	}
	if len(raw) > MaxBody {
		return &apperr.Error{Kind: apperr.TooLarge, Code: apperr.CodeTooLarge,
			Message: fmt.Sprintf("The request body is larger than %d KB.", MaxBody>>10), Details: map[string]any{"field": "body"}}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return apperr.Invalidf("body", "A JSON body is required.")
	}
	if !validText(raw) {
		f := invalidUTF8Field(raw)
		return apperr.Invalidf(f, "%s is not valid UTF-8 text.", f)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return apperr.Invalidf(te.Field, "%s must be a %s.", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return apperr.Invalidf("body", "The body is not valid JSON: %s.", err.Error())
	}
	if dec.More() {
		return apperr.Invalidf("body", "The body must be one JSON object.")
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "struct", "map":
		return "JSON object"
	case "slice", "array":
		return "JSON array"
	case "bool":
		return "true or false"
	default:
		return "number"
	}
}

// ParseTime reads an RFC 3339 instant and names the field when it is not one.
func ParseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, apperr.Invalidf(field, "%s is required (RFC 3339, e.g. 2026-03-15T09:00:00Z).", field)
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, apperr.Invalidf(field, "%s must be an RFC 3339 time such as 2026-03-15T09:00:00Z; got %q.", field, v)
	}
	return t.UTC(), nil
}

// UUIDParam parses v, the field named field, as a UUID (INVALID if it is not one).
func UUIDParam(v, field string) (uuid.UUID, error) {
	if v == "" {
		return uuid.Nil, apperr.Invalidf(field, "%s is required.", field)
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil, apperr.Invalidf(field, "%s must be a UUID.", field)
	}
	return id, nil
}

// ParseIDParam reads the :id of a staff page; a malformed one is not found.
func ParseIDParam(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, apperr.NotFoundf("id", "Not found.")
	}
	return id, nil
}
