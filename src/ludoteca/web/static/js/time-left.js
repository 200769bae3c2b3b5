// A duration in words for turn-based tables: "2 d 5 h", "3 h 20 min", "12 minutes", "less than a minute".
import {t, tn} from "./i18n.js";

export function timeLeft(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const days = Math.floor(s / 86400), hours = Math.floor((s % 86400) / 3600), minutes = Math.floor((s % 3600) / 60);
  if (days > 0) return hours ? t("{d} d {h} h", {d: days, h: hours}) : tn("{n} day", "{n} days", days);
  if (hours > 0) return minutes ? t("{h} h {m} min", {h: hours, m: minutes}) : tn("{n} hour", "{n} hours", hours);
  if (minutes > 0) return tn("{n} minute", "{n} minutes", minutes);
  return t("less than a minute");
}
