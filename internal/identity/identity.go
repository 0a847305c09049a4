// Package identity says when two ways of writing a patient's contact are
// the same person: the keys the cooldown, the allowances and the e-mail
// caps compare. A stored address stays as the patient typed it; only its
// key is compared.
package identity

import "strings"

// EmailKey is the form of an e-mail address that every spelling of one
// mailbox shares.
func EmailKey(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}
