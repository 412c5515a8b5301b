import { slotsOf, valuesOf } from './queue-form';

const days = (over: Partial<Record<string, string>>) => ({ mon: '', tue: '', wed: '', thu: '', fri: '', sat: '', sun: '', ...over });

describe('the queue form', () => {
  it('reads each day’s times, separated by commas or spaces, 9:00 as 09:00', () => {
    expect(slotsOf({ timezone: 'UTC', days: days({ mon: '09:00, 15:30', fri: '9:00 17.45' }) })).toEqual({
      ok: true,
      slots: [
        { day: 'mon', time: '09:00' },
        { day: 'mon', time: '15:30' },
        { day: 'fri', time: '09:00' },
        { day: 'fri', time: '17:45' },
      ],
    });
    expect(slotsOf({ timezone: 'UTC', days: days({}) })).toEqual({ ok: true, slots: [] });
  });

  it('names the day of every problem', () => {
    expect(slotsOf({ timezone: 'UTC', days: days({ tue: '9am, 24:00', sun: '10:00 10:00' }) })).toEqual({
      ok: false,
      problem:
        'Tuesday: “9am” is not a time (HH:MM, from 00:00 to 23:59); Tuesday: “24:00” is not a time (HH:MM, from 00:00 to 23:59); Sunday: 10:00 is listed twice',
    });
  });

  it('shows a saved schedule back as the form takes it', () => {
    const values = valuesOf({
      timezone: 'Europe/Berlin',
      slots: [
        { day: 'mon', time: '09:00' },
        { day: 'mon', time: '15:30' },
        { day: 'sun', time: '02:30' },
      ],
    });
    expect(values).toEqual({ timezone: 'Europe/Berlin', days: days({ mon: '09:00, 15:30', sun: '02:30' }) });
    expect(slotsOf(values)).toEqual({
      ok: true,
      slots: [
        { day: 'mon', time: '09:00' },
        { day: 'mon', time: '15:30' },
        { day: 'sun', time: '02:30' },
      ],
    });
  });
});
