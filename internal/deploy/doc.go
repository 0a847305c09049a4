// Package deploy holds the operator's files for running the server and
// the tests that check them: the image's Containerfile (built by
// `make image` with image.sh), the systemd unit clinic.service, an example
// compose.yaml with the nginx proxy in front of two servers, and the
// Compose specification's JSON schema that compose.yaml is validated
// against. It has no code of its own: the tests unpack the built image
// and run it in a chroot, verify the unit with systemd-analyze and
// validate the compose file.
package deploy
