package web

// The stream encoders, for the tests of the event-stream format. The text
// check every request passes and the reading of an If-Match, for the fuzz
// targets, which tell which refusal an input must get.
var (
	EncodeEvent = encodeNamed
	EncodeData  = encodeData
	PlainText   = plainText
	ParseETag   = parseETag
)
