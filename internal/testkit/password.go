package testkit

import (
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// Password is the password of every staff account the tests make.
const Password = "correct horse battery"

var (
	passwordHashOnce sync.Once
	passwordHashed   string
)

// PasswordHash is Password hashed at bcrypt's lowest cost, hashed once per
// test binary: a sign-in compares at the cost the hash was made with, so
// the tests' sign-ins stay quick.
func PasswordHash() string {
	passwordHashOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(Password), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		passwordHashed = string(h)
	})
	return passwordHashed
}
