// Reads an iCalendar file with ical.js, as calendar apps built on it do,
// and prints what it understood: the calendar's name and each event's
// instants (UTC), summary, description and status, as JSON.
import ICAL from "ical.js";
import { readFileSync } from "node:fs";

const cal = new ICAL.Component(ICAL.parse(readFileSync(process.argv[2], "utf8")));
const events = cal.getAllSubcomponents("vevent").map((v) => {
  const e = new ICAL.Event(v);
  return {
    uid: e.uid,
    start: e.startDate.toJSDate().toISOString(),
    end: e.endDate.toJSDate().toISOString(),
    summary: e.summary,
    description: e.description,
    status: v.getFirstPropertyValue("status"),
  };
});
console.log(JSON.stringify({ name: cal.getFirstPropertyValue("x-wr-calname"), events }));
