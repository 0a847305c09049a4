package kiosk

import (
	"math"
	"strings"
	"unicode/utf8"
)

// The board's geometry. Every size on the board is a multiple of one unit
// u = min(1vh, 0.5625vw) (the stylesheet's --u), so the board is a 16:9
// canvas of 177.8u by 100u scaled to whatever screen it is on, and what
// fits at 1920x1080 fits at 1280x720 and on any other screen. The numbers
// here mirror the kiosk part of static/app.css; the browser test checks
// that they agree.
const (
	kioskAreaW = 140.8 // the blocks' area: the board less its padding, the booking panel and gaps
	kioskAreaH = 85.5  // the board less its padding, the header and a gap
	kioskGap   = 1.5   // between blocks
	kioskMaxC  = 6     // columns and rows of blocks at most
	kioskMaxR  = 6
	// Inside a block, in em of the block's font: padding across and down,
	// the type's name, one day's heading, one line of times, a time's
	// width and the gap between times.
	kioskPadX, kioskPadY = 1.6, 1.2
	kioskTitleEm         = 1.7
	kioskDayHeadEm       = 1.85
	kioskLineEm          = 1.5
	kioskTimeEm          = 3.6
	kioskTimeGapEm       = 0.3
	kioskSpareEm         = 0.4 // rounding, and a font wider than the one measured
	// A type's name wraps (never cut): each line past the first, and the
	// width of one of its letters, at most, on average, in em of the
	// block's font (the name is 1.3em, bold).
	kioskTitleLineEm = 1.5
	kioskTitleCharEm = 1.3 * 0.6
	// The next days: one line each, below a heading like a day's.
	kioskAheadLineEm = 1.45
	// kioskMaxPerDay keeps a board of one or two types to the next few
	// times, not the whole day.
	kioskMaxPerDay = 24
)

// Block font sizes in u, the smaller of the rows' and the columns' value
// (the stylesheet's --kr and --kc): small enough that two lines of times a
// day fit a block's height, and at least three times a line its width.
var (
	kioskFontRows = [kioskMaxR + 1]float64{0, 3.6, 3.0, 1.95, 1.45, 1.15, 0.95}
	kioskFontCols = [kioskMaxC + 1]float64{0, 10, 5.3, 3.5, 2.6, 2.05, 1.7}
)

// kioskLayout is the grid of a board's blocks.
type kioskLayout struct{ cols, rows int }

// layoutFor is the grid for n blocks with the largest type: of every
// grid with room for them, the one whose font is largest, then the one
// with the fewest empty places. Past 36 types the last blocks fall off
// the screen.
func layoutFor(n int) kioskLayout {
	best, bestFont, bestEmpty := kioskLayout{1, 1}, 0.0, 0
	for r := 1; r <= kioskMaxR; r++ {
		c := max(1, (n+r-1)/r)
		if c > kioskMaxC {
			continue
		}
		l := kioskLayout{c, r}
		if f, empty := l.font(), c*r-n; f > bestFont || (f == bestFont && empty < bestEmpty) {
			best, bestFont, bestEmpty = l, f, empty
		}
	}
	if bestFont == 0 {
		best = kioskLayout{kioskMaxC, kioskMaxR}
	}
	return best
}

// font is the blocks' font size in u.
func (l kioskLayout) font() float64 { return min(kioskFontRows[l.rows], kioskFontCols[l.cols]) }

// kioskFit is the room in a block of a layout for a type with names of
// some length: how many times fit a line and how many lines a day, and
// the height left for the days' contents, in em of the block's font.
type kioskFit struct {
	perLine, lines int
	height         float64
}

// fit is the room in a block for a type named names (one per language
// the board speaks): the name takes as many lines as its longest needs,
// and each of today and tomorrow gets half of what is left, as many
// times as fit a line (at most ten) on as many lines as fit (one to
// four).
func (l kioskLayout) fit(names ...string) kioskFit {
	f := l.font()
	w := (kioskAreaW-kioskGap*float64(l.cols-1))/float64(l.cols)/f - kioskPadX
	h := (kioskAreaH-kioskGap*float64(l.rows-1))/float64(l.rows)/f - kioskPadY - kioskTitleEm - kioskSpareEm
	titleLines := 1
	for _, n := range names {
		titleLines = max(titleLines, wrappedLines(n, int(w/kioskTitleCharEm)))
	}
	h -= float64(titleLines-1) * kioskTitleLineEm
	perLine := int(math.Floor((w + kioskTimeGapEm) / (kioskTimeEm + kioskTimeGapEm)))
	lines := int(math.Floor((h/kioskDays - kioskDayHeadEm + kioskTimeGapEm) / (kioskLineEm + kioskTimeGapEm)))
	return kioskFit{perLine: min(max(perLine, 1), 10), lines: min(max(lines, 1), 4), height: h}
}

// perDay is how many times of a day the block shows at most.
func (r kioskFit) perDay() int { return min(r.perLine*r.lines, kioskMaxPerDay) }

// aheadLines is how many later days fit below today and tomorrow showing
// shown times each: the height their headings and lines of times leave,
// less a heading, in lines; 0 when not even one fits.
func (r kioskFit) aheadLines(shown []int) int {
	used := kioskDayHeadEm
	for _, n := range shown {
		used += kioskDayHeadEm
		if n > 0 {
			k := float64((n + r.perLine - 1) / r.perLine)
			used += k*kioskLineEm + (k-1)*kioskTimeGapEm
		}
	}
	return max(int(math.Floor((r.height-used)/kioskAheadLineEm)), 0)
}

// wrappedLines is how many lines of perLine characters name takes,
// wrapped between words, a word longer than a line broken anywhere.
func wrappedLines(name string, perLine int) int {
	perLine = max(perLine, 1)
	lines, used := 1, 0
	for _, w := range strings.Fields(name) {
		n := utf8.RuneCountInString(w)
		switch {
		case used == 0:
			used = n
		case used+1+n <= perLine:
			used += 1 + n
		default:
			lines, used = lines+1, n
		}
		for used > perLine {
			lines, used = lines+1, used-perLine
		}
	}
	return lines
}

// perDay is how many times of a day a block of a type with a one-line
// name has room for.
func (l kioskLayout) perDay() int { return l.fit().perDay() }
