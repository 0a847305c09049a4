package views

import "strconv"

func itoa(n int) string { return strconv.Itoa(n) }

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
			out = n
		case i == len(names)-1:
			out += " or " + n
		default:
			out += ", " + n
		}
	}
	return out
}

func statusText(s string) string {
	switch s {
	case "confirmed":
		return "Confirmed"
	case "cancelled":
		return "Cancelled"
	case "rescheduled":
		return "Moved to another time"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func joinTimes(ts []string) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += " "
		}
		out += t
	}
	return out
}

func typeFormAction(id string) string {
	if id == "" {
		return "/staff/types"
	}
	return "/staff/types/" + id
}
