/// ISO 4217 currency codes and their minor-unit exponents.
public enum Currency {
    /// The currency used when a write names none and the settings set no default.
    public static let fallbackDefault = "KRW"

    /// Active ISO 4217 codes (2024 list) mapped to their number of minor-unit digits.
    public static let minorUnitDigits: [String: Int] = {
        var table: [String: Int] = [:]
        let zero = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
        let three = "BHD IQD JOD KWD LYD OMR TND"
        let four = "CLF UYW"
        let two = """
            AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD \
            CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL \
            GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD \
            LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN \
            PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL \
            THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL
            """
        for (codes, digits) in [(zero, 0), (two, 2), (three, 3), (four, 4)] {
            for code in codes.split(separator: " ") { table[String(code)] = digits }
        }
        return table
    }()

    /// True for an active ISO 4217 code in upper case.
    public static func isValid(_ code: String) -> Bool { minorUnitDigits[code] != nil }

    /// The code the `defaultCurrency` setting's JSON value names (`"KRW"`), nil if it is no
    /// valid code in quotes: what a write checks and what a write without a currency reads.
    public static func code(fromSettingJSON json: String) -> String? {
        guard json.count >= 2, json.hasPrefix("\""), json.hasSuffix("\"") else { return nil }
        let code = String(json.dropFirst().dropLast())
        return isValid(code) ? code : nil
    }

    /// `amount` minor units as a decimal string with grouping: 12345 USD → "123.45", 12345 KRW → "12,345".
    public static func format(_ amount: Int64, currency: String) -> String {
        let digits = minorUnitDigits[currency] ?? 2
        let negative = amount < 0
        let magnitude = amount.magnitude
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let whole = String(magnitude / scale)
        var grouped = ""
        for (index, character) in whole.reversed().enumerated() {
            if index > 0, index % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        var text = String(grouped.reversed())
        if digits > 0 {
            let fraction = String(magnitude % scale)
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return (negative ? "-" : "") + text
    }
}
