// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Base64} from "@openzeppelin/contracts/utils/Base64.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @title A demo ERC-1155 collection
/// @notice Badges held in quantities: ids 1, 2 and 3 are the bronze, silver and gold badges, any
/// other id is a numbered item. `uri(id)` answers each id's metadata as a complete
/// `data:application/json;base64,` document (EIP-1155 lets a contract return a full URI instead of
/// the `{id}` template), so nothing is fetched from a server. Only the owner mints.
contract AgoraItems is ERC1155, Ownable {
    /// @notice The collection's display name (ERC-1155 has no standard one; wallets read this).
    string public name;

    constructor(string memory name_, address initialOwner) ERC1155("") Ownable(initialOwner) {
        name = name_;
    }

    /// @notice Mints `amount` of item `id` to `to`; the owner only.
    function mint(address to, uint256 id, uint256 amount) external onlyOwner {
        _mint(to, id, amount, "");
    }

    /// @notice Mints several items to `to` in one transfer; the owner only.
    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts) external onlyOwner {
        _mintBatch(to, ids, amounts, "");
    }

    /// @notice The metadata of item `id` as a JSON data: URI.
    function uri(uint256 id) public view override returns (string memory) {
        (string memory title, string memory colour) = _look(id);
        string memory svg = string.concat(
            "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 120 120'>",
            "<circle cx='60' cy='60' r='52' fill='", colour, "'/></svg>"
        );
        string memory json = string.concat(
            '{"name":"', title, '","description":"A demo item of ', name,
            '.","image":"data:image/svg+xml;base64,', Base64.encode(bytes(svg)), '"}'
        );
        return string.concat("data:application/json;base64,", Base64.encode(bytes(json)));
    }

    function _look(uint256 id) private pure returns (string memory title, string memory colour) {
        if (id == 1) return ("Bronze badge", "#cd7f32");
        if (id == 2) return ("Silver badge", "#c0c0c0");
        if (id == 3) return ("Gold badge", "#ffd700");
        return (string.concat("Item #", Strings.toString(id)), "#1f6feb");
    }
}
