package web

// The stream encoders, for the tests of the event-stream format.
var (
	EncodeEvent = encodeNamed
	EncodeData  = encodeData
)
