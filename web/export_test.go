package web

// The stream encoders, for the tests of the event-stream format, and the
// calendar file, for the tests of its lines.
var (
	EncodeEvent = encodeNamed
	EncodeData  = encodeData
	ICS         = icsCalendar
)
