package i18n

import (
	"strconv"
	"strings"
	"time"
)

// German names, as CLDR abbreviates them ("Di.", "Nov.").
var (
	deWeekdays      = [...]string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}
	deWeekdaysShort = [...]string{"So.", "Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa."}
	deMonths        = [...]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	deMonthsShort   = [...]string{"Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."}
)

// Time is the wall-clock time, "14:30" in both languages.
func (l *Localizer) Time(t time.Time) string { return t.Format("15:04") }

// Day is a short day: "Tue 24 Nov", "Di., 24. Nov.".
func (l *Localizer) Day(t time.Time) string {
	l = l.orEnglish()
	if l.lang == German {
		return deWeekdaysShort[t.Weekday()] + ", " + l.DayMonth(t)
	}
	return t.Format("Mon 2 Jan")
}

// DayMonth is a date without weekday and year: "24 Nov", "24. Nov.".
func (l *Localizer) DayMonth(t time.Time) string {
	l = l.orEnglish()
	if l.lang == German {
		return strconv.Itoa(t.Day()) + ". " + deMonthsShort[t.Month()-1]
	}
	return t.Format("2 Jan")
}

// DayMonthYear is "24 Nov 2026", "24. Nov. 2026".
func (l *Localizer) DayMonthYear(t time.Time) string {
	l = l.orEnglish()
	if l.lang == German {
		return l.DayMonth(t) + " " + strconv.Itoa(t.Year())
	}
	return t.Format("2 Jan 2006")
}

// LongDay is "Tuesday 24 November", "Dienstag, 24. November".
func (l *Localizer) LongDay(t time.Time) string {
	l = l.orEnglish()
	if l.lang == German {
		return deWeekdays[t.Weekday()] + ", " + strconv.Itoa(t.Day()) + ". " + deMonths[t.Month()-1]
	}
	return t.Format("Monday 2 January")
}

// LongDateTime is "Tuesday 24 November 2026, 14:30",
// "Dienstag, 24. November 2026, 14:30".
func (l *Localizer) LongDateTime(t time.Time) string {
	l = l.orEnglish()
	if l.lang == German {
		return l.LongDay(t) + " " + strconv.Itoa(t.Year()) + ", " + l.Time(t)
	}
	return t.Format("Monday 2 January 2006, 15:04")
}

// deZoneAdjectives are the zones whose city German names with an
// adjective ("Berliner Zeit"); any other zone is "Ortszeit <city>".
var deZoneAdjectives = map[string]string{
	"Europe/Berlin": "Berliner", "Europe/Busingen": "Büsinger", "Europe/Vienna": "Wiener",
	"Europe/Zurich": "Zürcher", "Europe/Luxembourg": "Luxemburger", "Europe/Brussels": "Brüsseler",
	"Europe/Amsterdam": "Amsterdamer", "Europe/Paris": "Pariser", "Europe/London": "Londoner",
	"Europe/Dublin": "Dubliner", "Europe/Madrid": "Madrider", "Europe/Lisbon": "Lissabonner",
	"Europe/Copenhagen": "Kopenhagener", "Europe/Stockholm": "Stockholmer", "Europe/Oslo": "Osloer",
	"Europe/Prague": "Prager", "Europe/Warsaw": "Warschauer", "Europe/Budapest": "Budapester",
	"Europe/Athens": "Athener", "Europe/Istanbul": "Istanbuler", "Europe/Moscow": "Moskauer",
	"America/New_York": "New Yorker",
}

// Zone is an IANA zone as people say it, by its city: "Berlin time",
// "Berliner Zeit"; UTC stays UTC.
func (l *Localizer) Zone(name string) string {
	l = l.orEnglish()
	city := strings.ReplaceAll(name[strings.LastIndex(name, "/")+1:], "_", " ")
	if city == "" || city == "UTC" || city == "GMT" || strings.HasPrefix(name, "Etc/") {
		return name
	}
	if l.lang == German {
		if adj, ok := deZoneAdjectives[name]; ok {
			return adj + " Zeit"
		}
		return "Ortszeit " + city
	}
	return city + " time"
}
