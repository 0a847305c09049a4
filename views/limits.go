package views

import "github.com/clinic/booking/internal/textfield"

// maxlength attributes: the limits the server checks, so a browser stops
// typing where the server would refuse.
var reasonMaxLength = itoa(textfield.Reason.Max)
